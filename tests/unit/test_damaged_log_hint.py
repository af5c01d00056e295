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
