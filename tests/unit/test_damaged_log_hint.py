"""A damaged log met by a reader (`runs`, `marts`, `report`, `vacuum`) named the damage and no way out;
only `verify` gave the repair (a new user's trial). The line now names the verify command that gives
it, and verify's own line gives the repair once, not that hint. No JVM."""

import pyarrow as pa
import pytest

from pipeline.cli import main
from pipeline.repair import verify_store
from pipeline.storage import Store

SCHEMA = pa.schema({"run_id": pa.string(), "x": pa.int64()})


@pytest.fixture
def damaged_runs_log(tmp_path):
    store = Store.parse(str(tmp_path))
    for version in range(2):
        store.write_and_commit("runs", "r", f"run-{version}.parquet", pa.table({"x": [version]}), SCHEMA, ("t", version))
    (tmp_path / "runs" / "_delta_log" / f"{1:020d}.json").write_text("not a commit\n")
    return store


@pytest.mark.parametrize("command", [["runs"], ["vacuum", "--dry-run"]])
def test_a_reader_of_a_damaged_log_names_the_verify_command_that_gives_its_repair(damaged_runs_log, capsys, command):
    status = main([*command, "--out", damaged_runs_log.uri])
    out, err = capsys.readouterr()
    assert (status, out) == (1, "") and err.count("\n") == 1, err
    assert err.startswith("error: the log of table 'runs' is damaged: ")
    assert err.rstrip().endswith(f"; `baccarat verify --out {damaged_runs_log.uri}` names its repair")


def test_verifys_own_line_gives_the_repair_alone(damaged_runs_log):
    problems, _ = verify_store(damaged_runs_log)
    assert len(problems) == 1 and "baccarat verify" not in problems[0] and "; repair: " in problems[0], problems


def test_runs_with_a_damaged_rounds_log_listed_its_marts_built_and_said_nothing_else(tmp_path, capsys, monkeypatch):
    """`runs` reads the runs table and the marts, not the rounds: a run whose rounds log is damaged was listed
    with its marts built, and `marts` then failed on the log. The log, which `runs` opens (for the runs it
    lost), is named in a warning with verify's command; no data file is read, and the exit stays 0."""
    from dataclasses import replace

    from deltalake import write_deltalake
    from test_run_counts import RUN

    from pipeline import runs
    from pipeline.marts.inputs import MARTS
    from pipeline.schemas import contract

    rounds = tmp_path / "rounds"
    for shoe in range(2):
        write_deltalake(str(rounds), pa.table({"run_id": ["r"], "shoe_id": [shoe]}), partition_by=["run_id"],
                        mode="append")
    for name in MARTS:
        write_deltalake(str(tmp_path / contract(name).table), pa.table({"run_id": ["r"], "x": [1]}),
                        partition_by=["run_id"])
    commit = rounds / "_delta_log" / f"{1:020d}.json"
    commit.write_text("not a commit\n")
    monkeypatch.setattr(runs, "read_runs", lambda store: [replace(RUN, versions={"rounds": 1})])
    status = main(["runs", "--out", str(tmp_path)])
    out, err = capsys.readouterr()
    [row] = [line for line in out.splitlines() if line.startswith("r ")]
    assert status == 0 and " built " in row, out
    assert err == (f"warning: the log of table 'rounds' is damaged: {commit}: commit 1 is not a Delta commit (JSON "
                   f"lines); `baccarat verify --out {tmp_path}` names its repair (`baccarat marts` fails on it until "
                   "then)\n"), err
