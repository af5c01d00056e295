"""A table a job adds to runs (sessions, round_ev) whose log is gone while its data files are there: no reader
sees the rows, and `verify` said every log checks out (a new user's trial: `rm -rf data/sessions/_delta_log`,
or a copy that left it out). No JVM."""

import shutil

import pyarrow as pa

from pipeline.jobs import drop_run_rows
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


def test_a_run_whose_commit_is_gone_from_a_log_still_there_is_named(tmp_path):
    """`rm data/sessions/_delta_log/00000000000000000001.json` (the backtest's commit): verify said 'every log,
    file and contract checks out' (exit 0), and `baccarat marts` then built the system marts of no session,
    without a word."""
    store = backtested(tmp_path, "a", "b")
    (tmp_path / "sessions" / "_delta_log" / "00000000000000000002.json").unlink()  # b's, the last
    [line] = unlogged_added_rows(Store.parse(str(tmp_path)))
    assert line.startswith(f"{tmp_path / 'sessions'} holds data files of run 'b' but its log holds none of their "
                           "rows, so no reader sees their rows")
    assert f"for each run, baccarat backtest --run-id b --out {tmp_path} --systems ..." in line
    assert store.run_ids("sessions") == {"a"}


def test_a_run_whose_rows_a_commit_took_out_is_not_named(tmp_path):
    """`simulate --overwrite` of a run with other parameters drops its sessions; their files stay until vacuum."""
    store = backtested(tmp_path, "a", "b")
    drop_run_rows(store, "sessions", "b", "tests")
    assert unlogged_added_rows(store) == []
