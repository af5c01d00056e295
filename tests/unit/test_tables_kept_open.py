"""Store.keeping_tables_open: within a command each table is opened once and brought up to date at each
later open, so that on an object store the command reads each commit of a table's log once. No JVM."""

import threading

import pyarrow as pa
import pytest

from pipeline.at_once import each_at_once
from pipeline.storage import Store

SCHEMA = pa.schema({"shoe_id": pa.int64(), "run_id": pa.string()})


def commit(store: Store, run_id: str, shoe: int) -> None:
    store.write_and_commit("rounds", run_id, f"part-{shoe}.parquet", pa.table({"shoe_id": [shoe]}), SCHEMA,
                           ("test", shoe))


@pytest.fixture
def store(tmp_path) -> Store:
    """A store whose rounds table holds run "first" (its file part-1)."""
    store = Store.parse(str(tmp_path))
    commit(store, "first", 1)
    return store


def test_a_table_kept_open_is_the_same_one_brought_up_to_date_with_another_writers_commits(store):
    with store.keeping_tables_open():
        opened = store.delta_table("rounds")
        as_another_process(store, "second", 2)
        again = store.delta_table("rounds")
        assert again is opened and again.version() == 2
        assert store.run_ids("rounds") == {"first", "second"}
    assert store.delta_table("rounds") is not store.delta_table("rounds")  # outside, every open is new


def test_the_threads_of_each_at_once_share_the_tables_their_caller_keeps_open_and_other_threads_do_not(tmp_path):
    store = Store.parse(str(tmp_path))
    commit(store, "first", 1)
    elsewhere = []
    with store.keeping_tables_open():
        opened = store.delta_table("rounds")
        assert each_at_once(lambda _: store.delta_table("rounds"), range(3)) == [opened] * 3
        thread = threading.Thread(target=lambda: elsewhere.append(store.delta_table("rounds")))
        thread.start()
        thread.join()
    assert elsewhere[0] is not opened


def test_a_table_whose_log_is_set_aside_is_opened_anew(tmp_path):
    store = Store.parse(str(tmp_path))
    for shoe in range(3):
        commit(store, f"run{shoe}", shoe)
    with store.keeping_tables_open():
        opened = store.delta_table("rounds")
        (tmp_path / "rounds" / "_delta_log" / f"{2:020d}.json").write_text("not json\n")
        assert store.set_log_aside("rounds") is not None
        reopened = store.delta_table("rounds")
        assert reopened is not opened and reopened.version() == 1
        assert store.run_ids("rounds") == {"run0"}


def run_files(store: Store, run_id: str) -> list[str]:
    return [f["path"].rsplit("/", 1)[1] for f in store.partition_files("rounds", run_id)]


def as_another_process(store: Store, run_id: str, shoe: int) -> None:
    """A commit outside the command's tables: a new thread starts with none kept open."""
    thread = threading.Thread(target=commit, args=(Store.parse(store.uri), run_id, shoe))
    thread.start()
    thread.join()


def test_a_commit_on_the_table_as_last_read_lands_on_another_writers_commit_of_another_run(store):
    with store.keeping_tables_open():
        opened = store.delta_table("rounds")
        as_another_process(store, "second", 2)
        assert opened.version() == 1
        commit(store, "first", 3)  # on version 1, which delta-rs finds is not the newest: made again on 2
        assert opened.version() == 3
    assert run_files(store, "first") == ["part-3.parquet"] and run_files(store, "second") == ["part-2.parquet"]


def test_a_commit_on_the_table_as_last_read_replaces_another_writers_commit_of_the_same_run(store):
    with store.keeping_tables_open():
        store.delta_table("rounds")
        as_another_process(store, "first", 2)
        commit(store, "first", 3)
    assert run_files(store, "first") == ["part-3.parquet"]


def test_files_the_table_as_last_read_holds_already_are_committed_again_once_another_writer_replaced_them(store):
    with store.keeping_tables_open():
        opened = store.delta_table("rounds")  # holds part-1 for the run
        as_another_process(store, "first", 2)
        commit(store, "first", 1)  # the same file again: known committed only on the table as it is now
        assert opened.version() == 3
    assert run_files(store, "first") == ["part-1.parquet"]

def test_the_possible_tables_are_those_whose_folder_exists(tmp_path):
    store = Store.parse(str(tmp_path))
    commit(store, "first", 1)
    (tmp_path / "marts" / "streaks").mkdir(parents=True)
    (tmp_path / "marts" / "road_cells").write_text("a file, not a folder")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "marts" / "shoe_summary").symlink_to(tmp_path / "elsewhere")
    asked = ["shoes", "rounds", "marts/perfect_play", "marts/streaks", "marts/road_cells", "marts/shoe_summary"]
    assert store.possible_tables(asked) == ["rounds", "marts/streaks", "marts/shoe_summary"]
    assert Store.parse(str(tmp_path / "nothing")).possible_tables(asked) == []
