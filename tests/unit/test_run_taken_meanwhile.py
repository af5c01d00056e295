"""Store.commit_partition with `may_replace`: a run's files of other parameters that another command committed
while this one ran are not replaced (two simulates of one run id with other parameters, started together,
both exited 0, the later one's run in place of the first's: a new user's trial). No JVM."""

import hashlib
import threading
from pathlib import Path

import pyarrow as pa
import pytest

from pipeline.storage import PartitionTaken, Store
from pipeline.tasks import part_key, part_name

SCHEMA = pa.schema({"shoe_id": pa.int64(), "run_id": pa.string()})


def written(store: Store, key: str, shoes: int) -> list[dict]:
    """The files a job of content key `key` writes for run "same" (not committed), with their SHA-256."""
    files = []
    for first in range(0, shoes, 10):
        entry = store.write_file("rounds", "same", part_name(first, first + 10, key),
                                 pa.table({"shoe_id": list(range(first, first + 10))}))
        files.append(entry | {"sha256": hashlib.sha256(Path(store.reader_path(entry["path"])).read_bytes()).hexdigest()})
    return files


def of_key(key: str):
    return lambda paths: all(part_key(path) == key for path in paths)


def commit(store: Store, files: list[dict], key: str) -> int:
    return store.commit_partition("rounds", "same", files, SCHEMA, ("test", 1), of_key(key))


def as_another_process(store: Store, files: list[dict], key: str) -> None:
    """A commit outside the command's tables: a new thread starts with none kept open."""
    thread = threading.Thread(target=commit, args=(Store.parse(store.uri), files, key))
    thread.start()
    thread.join()


@pytest.fixture
def store(tmp_path) -> Store:
    """A store whose rounds table holds run "other" alone."""
    store = Store.parse(str(tmp_path))
    store.write_and_commit("rounds", "other", "part-x.parquet", pa.table({"shoe_id": [1]}), SCHEMA, ("test", 0))
    return store


def held(store: Store) -> list[dict]:
    return Store.parse(store.uri).partition_files("rounds", "same", checksums=True)


def test_a_run_another_command_committed_first_is_not_replaced_and_nothing_is_committed(store):
    first = written(store, "aaaa", 20)
    commit(store, first, "aaaa")
    version = store.delta_table("rounds").version()
    with pytest.raises(PartitionTaken, match="another command committed while this one ran"):
        commit(store, written(store, "bbbb", 30), "bbbb")
    assert held(store) == first and store.delta_table("rounds").version() == version


def test_a_commit_that_landed_beside_another_commands_files_is_taken_out_again(store):
    # the command read the table when the run had no files; another committed them before it did
    with store.keeping_tables_open():
        assert store.partition_files("rounds", "same") == []
        first = written(store, "aaaa", 20)
        as_another_process(store, first, "aaaa")
        with pytest.raises(PartitionTaken):
            commit(store, written(store, "bbbb", 30), "bbbb")
    assert held(store) == first  # their recorded checksums too


def test_files_of_the_same_parameters_are_replaced_as_before(store):
    commit(store, written(store, "aaaa", 20), "aaaa")
    again = written(store, "aaaa", 30)
    commit(store, again, "aaaa")
    assert [f["path"] for f in held(store)] == [f["path"] for f in again]


def test_without_may_replace_the_last_writer_wins(store):
    commit(store, written(store, "aaaa", 20), "aaaa")
    replacing = written(store, "bbbb", 10)
    store.commit_partition("rounds", "same", replacing, SCHEMA, ("test", 2))
    assert held(store) == replacing
