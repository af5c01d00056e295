"""A commit of the sessions or round_ev log left empty (`: > data/sessions/_delta_log/...01.json`, a writer
killed, a disk that filled): deltalake reads it as a commit of no actions, so the rows it added were gone
without a word. `verify` said every log checks out, `marts` emptied the system marts, and the backtest
`verify` would name could not set it aside, and `vacuum` checkpointed over it (a new user's trial). Now
verify names it, marts and vacuum refuse in one line, and the repair sets the log aside from it. No JVM."""

import pyarrow as pa
import pytest

import pipeline.marts.inputs as inputs
from pipeline.repair import repair_added_log, repair_logs, verify_store
from pipeline.storage import DamagedLog, Store

SCHEMA = pa.schema({"system": pa.string(), "run_id": pa.string()})


def emptied(folder, table: str) -> Store:
    """Two runs' rows in `table` (versions 1 and 2: 0 creates it), the commit of the second left empty."""
    store = Store.parse(str(folder))
    for run_id in ("a", "b"):
        store.write_and_commit(table, run_id, "part-0.parquet", pa.table({"system": ["flat_banker"]}), SCHEMA,
                               ("tests", 1))
    (folder / table / "_delta_log" / f"{2:020d}.json").write_bytes(b"")
    return store


@pytest.mark.parametrize("table", ["sessions", "round_ev"])
def test_verify_names_an_empty_commit_that_deltalake_reads_past(tmp_path, table):
    problems, _ = verify_store(emptied(tmp_path, table))
    [line] = problems
    assert line.startswith(f"the log of table {table!r} is damaged: ") and "commit 2 is empty (no actions)" in line
    assert "; repair: baccarat " + ("backtest" if table == "sessions" else "composition") in line


@pytest.mark.parametrize("table", ["sessions", "round_ev"])
def test_the_repair_verify_names_sets_the_log_aside_from_the_empty_commit(tmp_path, table):
    store = emptied(tmp_path, table)
    [line] = repair_logs(store, [table])
    assert line.startswith(f"the damaged log of {tmp_path / table} is set aside in ")
    assert store.delta_table(table).version() == 1 and store.run_ids(table) == {"a"}
    assert verify_store(store)[0] == [] and repair_logs(store, [table]) == []


@pytest.mark.parametrize("table", ["sessions", "round_ev"])
def test_the_job_that_sets_the_log_aside_names_the_runs_it_took_out(tmp_path, table):
    """It said to compute (or backtest) "the other runs it held" again, whichever they were: none, when the
    damaged commit added no rows."""
    store = emptied(tmp_path, table)
    aside, lost = repair_added_log(store, table)
    assert aside.startswith(f"the damaged log of {tmp_path / table} is set aside in ")
    assert lost.startswith(f"note: {tmp_path / table} holds data files of run 'b' but its log holds none of their")
    assert f"baccarat {'backtest' if table == 'sessions' else 'composition'} --run-id b " in lost
    alone = Store.parse(str(tmp_path / "alone"))  # an empty commit after run 'a's: no run's rows taken out
    alone.write_and_commit(table, "a", "part-0.parquet", pa.table({"system": ["flat_banker"]}), SCHEMA, ("tests", 1))
    (tmp_path / "alone" / table / "_delta_log" / f"{2:020d}.json").write_bytes(b"")
    [aside] = repair_added_log(alone, table)
    assert aside.startswith(f"the damaged log of {tmp_path / 'alone' / table} is set aside in ")


def test_marts_refuses_sessions_whose_log_it_would_read_past(tmp_path, monkeypatch):
    store = emptied(tmp_path, "sessions")
    monkeypatch.setattr(inputs, "committed_runs", lambda out: ["a"])
    monkeypatch.setattr(inputs, "orphan_runs", lambda out, committed: [])
    monkeypatch.setattr(inputs, "load_run", lambda *args: pytest.fail("built marts without the emptied rows"))
    with pytest.raises(DamagedLog, match="commit 2 is empty"):
        inputs.load_runs(store)


def test_vacuum_refuses_to_checkpoint_over_an_empty_commit(tmp_path, cli):
    # its checkpoint summed the empty commit up: verify then said every log checks out, for good
    emptied(tmp_path, "sessions")
    status, _, err = cli("vacuum", "--out", tmp_path)
    assert status == 1 and err.count("\n") == 1 and "commit 2 is empty (no actions)" in err
    assert not list((tmp_path / "sessions" / "_delta_log").glob("*.checkpoint.parquet"))
