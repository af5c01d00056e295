"""Store.keeping_tables_open: within a command each table is opened once and brought up to date at each
later open, so that on an object store the command reads each commit of a table's log once. No JVM."""

import threading

import pyarrow as pa

from pipeline.at_once import each_at_once
from pipeline.storage import Store

SCHEMA = pa.schema({"shoe_id": pa.int64(), "run_id": pa.string()})


def commit(store: Store, run_id: str, shoe: int) -> None:
    store.write_and_commit("rounds", run_id, f"part-{shoe}.parquet", pa.table({"shoe_id": [shoe]}), SCHEMA,
                           ("test", shoe))


def test_a_table_kept_open_is_the_same_one_brought_up_to_date_with_another_writers_commits(tmp_path):
    store, other_writer = Store.parse(str(tmp_path)), Store.parse(str(tmp_path))
    commit(store, "first", 1)
    with store.keeping_tables_open():
        opened = store.delta_table("rounds")
        commit(other_writer, "second", 2)  # as another process would: outside this command's tables
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
