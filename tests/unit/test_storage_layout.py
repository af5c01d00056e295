"""Storage's layout comes from the contracts (schemas/*.yaml): the tables' names and the column a run's
folder is named by; only storage builds a data file's path, and its stream carries it. No JVM."""

import dataclasses
import os
import pickle

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_process import baccarat

from pipeline.schemas import shipped_contracts
from pipeline.storage import Store, data_file, partition_column
from pipeline.storage.delta import CHECKPOINT_INTERVAL
from pipeline.storage import layout


def test_every_contract_declares_the_run_partition():
    assert {c.name: c.partition_by for c in shipped_contracts()} == {c.name: "run_id" for c in shipped_contracts()}
    assert partition_column() == "run_id"


def test_contracts_that_disagree_on_the_partition_column_are_refused(monkeypatch):
    first, *rest = shipped_contracts()
    monkeypatch.setattr(layout, "shipped_contracts", lambda: (dataclasses.replace(first, partition_by="day"), *rest))
    layout.partition_column.cache_clear()
    try:
        with pytest.raises(ValueError, match="'day', 'run_id'"):
            layout.partition_column()
    finally:
        layout.partition_column.cache_clear()


def test_the_table_names_are_the_contracts_tables_and_the_marts_folders(tmp_path):
    (tmp_path / "marts" / "streaks").mkdir(parents=True)
    (tmp_path / "marts" / "stray.txt").write_text("not a table")
    names = Store.parse(str(tmp_path)).table_names()
    assert names == ["banque_rounds", "round_ev", "rounds", "runs", "sessions", "shoes", "marts/streaks"]


def test_round_ev_is_a_table_verify_and_vacuum_see(tmp_path):
    assert "round_ev" in Store.parse(str(tmp_path)).table_names()


def test_create_file_writes_where_storage_says_and_its_stream_carries_the_path(tmp_path):
    store = Store.parse(str(tmp_path))
    rows = pa.table({"shoe_id": [1, 2]})
    with store.create_file("rounds", "r1", "part-0.parquet", "job") as stream:
        pq.write_table(rows, stream)
    assert stream.path == data_file("rounds", "r1", "part-0.parquet") == "rounds/run_id=r1/part-0.parquet"
    assert pq.read_table(tmp_path / stream.path).equals(rows)
    assert stream.size == (tmp_path / stream.path).stat().st_size
    assert [p.name for p in (tmp_path / "rounds" / "run_id=r1").iterdir()] == ["part-0.parquet"]


def test_a_store_is_one_value_that_travels_to_the_tasks(tmp_path):
    store = Store.parse(str(tmp_path))
    assert pickle.loads(pickle.dumps(store)) == store
    assert str(store) == store.uri == str(tmp_path)
    assert Store.parse("s3://bucket/a/").fs_path("rounds") == "bucket/a/rounds"


@pytest.mark.parametrize("command", ["runs", "verify", "vacuum", "marts", "sql", "report"])
def test_a_table_folder_given_for_the_data_folder_is_refused_not_listed_as_empty(cli, tmp_path, command):
    """`baccarat runs --out data/rounds` listed no run and exited 0: data/rounds is a table of data/. `baccarat
    sql` and `baccarat report` said there was no warehouse there and to run `baccarat marts`, which refused it."""
    table = tmp_path / "data" / "rounds"
    (table / "_delta_log").mkdir(parents=True)
    status, out, err = cli(command, "--out", table)
    assert (status, out) == (2, "") and err.count("\n") == 1
    assert f"{table} is a Delta table, not a data folder" in err and f"--out {tmp_path / 'data'}" in err
    assert sorted(tmp_path.rglob("*")) == [tmp_path / "data", table, table / "_delta_log"]


def test_opening_a_table_read_every_commit_it_ever_had_since_no_commit_wrote_a_checkpoint(tmp_path):
    """On an object store each commit an open reads is a request: a checkpoint every CHECKPOINT_INTERVAL
    commits bounds them, and the table still reads as the commits made it."""
    store = Store.parse(str(tmp_path))
    schema = pa.schema({"shoe_id": pa.int64(), "run_id": pa.string()})
    for run in range(CHECKPOINT_INTERVAL + 2):
        store.write_and_commit("rounds", f"r{run}", "part-0.parquet", pa.table({"shoe_id": [run]}), schema,
                               ("test", run))
    log = sorted(path.name for path in (tmp_path / "rounds" / "_delta_log").iterdir())
    assert [name for name in log if name.endswith(".checkpoint.parquet")]
    assert store.run_ids("rounds") == {f"r{run}" for run in range(CHECKPOINT_INTERVAL + 2)}
    assert sorted(store.read_rows("rounds")["shoe_id"].to_pylist()) == list(range(CHECKPOINT_INTERVAL + 2))


@pytest.mark.parametrize(("command", "out"), [("runs", "abfss://data@account.dfs.core.windows.net/baccarat"),
                                               ("verify", "abfss://data@account.dfs.core.windows.net"),
                                               ("simulate", "abfss://data@account/baccarat")])
def test_azure_credentials_that_fail_aborted_the_process(tmp_path, monkeypatch, command, out):
    """`baccarat runs --out abfss://...` with no Azure credentials ended in "terminate called after
    throwing an instance of 'Azure::Core::Credentials::AuthenticationException'", exit 134: pyarrow's
    file information on a container does not catch it. A failure of the store, in one line."""
    for name in [name for name in os.environ if name.startswith("AZURE_")]:
        monkeypatch.delenv(name)
    args = [command, "--out", out] + (["--shoes", "2", "--seed", "1"] if command == "simulate" else [])
    done = baccarat(args, cwd=tmp_path)
    assert done.returncode == 1 and done.stdout == "", (done.returncode, done.stderr)
    account = out.split("@")[1].split("/")[0].split(".")[0]
    assert done.stderr.splitlines()[-1].startswith(f"error: output path {out} is not "), done.stderr
    assert f"https://{account}.blob.core.windows.net/data" in done.stderr and "terminate" not in done.stderr
