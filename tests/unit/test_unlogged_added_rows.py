"""A table a job adds to runs (sessions, round_ev) whose log is gone while its data files are there: no reader
sees the rows, and `verify` said every log checks out (a new user's trial: `rm -rf data/sessions/_delta_log`,
or a copy that left it out). No JVM."""

import shutil

import pyarrow as pa

from pipeline.repair import unlogged_added_rows
from pipeline.storage import Store

SCHEMA = pa.schema({"system": pa.string(), "run_id": pa.string()})


def backtested(folder, *run_ids: str) -> Store:
    store = Store.parse(str(folder))
    for run_id in run_ids:
        store.write_and_commit("sessions", run_id, "part-0.parquet", pa.table({"system": ["flat_banker"]}), SCHEMA,
                               ("tests", 1))
    return store


def test_a_sessions_table_with_its_log_is_not_named(tmp_path):
    assert unlogged_added_rows(backtested(tmp_path, "a", "b")) == []


def test_a_sessions_table_whose_log_is_gone_is_named_with_its_runs_and_the_backtest_that_writes_them(tmp_path):
    store = backtested(tmp_path, "a", "b")
    shutil.rmtree(tmp_path / "sessions" / "_delta_log")
    [line] = unlogged_added_rows(store)
    assert line.startswith(f"{tmp_path / 'sessions'} holds data files of 2 runs, such as 'a', but no log, so no "
                           "reader sees their rows")
    assert f"for each run, baccarat backtest --run-id a --out {tmp_path} --systems ..." in line
    assert line.endswith("`baccarat vacuum` removes them")


def test_a_table_never_written_is_not_named(tmp_path):
    (tmp_path / "round_ev").mkdir()
    assert unlogged_added_rows(Store.parse(str(tmp_path))) == []
