"""Store.delta_table opens a table at once, with no request first to look for a commit in its log (on an
object store a round trip of its own), and still tells a table from a folder that is none yet and from a
damaged log. No JVM."""

import shutil

import pytest
from test_empty_log_commits import store_of_three_runs

from pipeline.storage import DamagedLog, Store
from pipeline.storage.delta_log import DELTA_LOG, LAST_CHECKPOINT


@pytest.fixture
def store(tmp_path) -> Store:
    return store_of_three_runs(tmp_path)  # versions 0 (the table made) to 3


def test_a_table_opens_at_its_newest_version_and_at_an_older_one(store):
    assert store.delta_table("rounds").version() == 3
    assert store.delta_table("rounds", version=1).version() == 1


@pytest.mark.parametrize("what", ["no folder", "a folder of files", "an empty log", "a checkpoint hint alone"])
def test_what_holds_no_commit_is_no_table_yet(store, tmp_path, what):
    log = tmp_path / "rounds" / DELTA_LOG
    if what == "no folder":
        shutil.rmtree(tmp_path / "rounds")
    elif what == "a folder of files":
        shutil.rmtree(log)
    else:
        shutil.rmtree(log)
        log.mkdir()
        if what == "a checkpoint hint alone":
            (log / LAST_CHECKPOINT).write_text('{"version": 0, "size": 1}')
    assert store.delta_table("rounds") is None


def test_a_missing_first_commit_and_a_version_not_there_are_errors_not_absent_tables(store, tmp_path):
    with pytest.raises(Exception, match="no readable version 7"):
        store.delta_table("rounds", version=7)
    (tmp_path / "rounds" / DELTA_LOG / f"{0:020d}.json").unlink()
    with pytest.raises(DamagedLog, match="commit 0 of 3 is missing"):
        store.delta_table("rounds")
