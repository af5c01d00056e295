"""`composition` and `backtest` in place of a run's earlier round_ev or sessions rows: the run's marts
built from the earlier rows go, and OUT's warehouse is published again, so that neither serves figures
of rows that are gone (pipeline/marts/replaced.py). Before, system_outcomes kept a system the sessions no
longer held, and perfect_play the shoes of an earlier composition, until the next `baccarat marts`."""

import shlex
import threading
from pathlib import Path

import duckdb
import pytest
import yaml
from deltalake import DeltaTable
from spark_jobs import simulate_with_marts

from pipeline.cli import jobs as cli_jobs
from pipeline.cli import main
from pipeline.config_files import resource
from pipeline.marts import engines, publish
from pipeline.marts.inputs import COMPOSITION_MARTS, EVERY_MART, SYSTEM_MARTS
from pipeline.schemas import contract
from pipeline.storage import Store

RUN = "stale-s5-n12"
BUILT_FROM = {"composition": COMPOSITION_MARTS, "backtest": SYSTEM_MARTS}


def warehouse_rows(out, query: str) -> list[tuple]:
    with duckdb.connect(str(out / "warehouse.duckdb"), read_only=True) as con:
        return con.sql(query).fetchall()


def committed_runs_in(out, table: str) -> set[str]:
    return {p["run_id"] for p in DeltaTable(str(out / table)).partitions()}


def committed_runs_of(out, mart: str) -> set[str]:
    return committed_runs_in(out, contract(mart).table)


def assert_forgotten(out, command: str, printed: str) -> None:
    """The run's marts built from `command`'s rows are gone from the Delta tables and the warehouse."""
    for mart in BUILT_FROM[command]:
        assert warehouse_rows(out, f"SELECT count(*) FROM {mart} WHERE run_id = '{RUN}'") == [(0,)], mart
        assert RUN not in committed_runs_of(out, mart), mart
    assert f"the run's {command} marts, built from the rows these replaced, are removed" in printed
    assert f"published {out / 'warehouse.duckdb'} again" in printed


@pytest.fixture
def run_with_marts(spark, tmp_path):
    return simulate_with_marts(spark, tmp_path, seed=5, shoes=12, partitions=2, run_id=RUN)


def test_a_backtest_in_place_of_earlier_sessions_removes_the_system_marts_built_from_them(cli, run_with_marts):
    out = run_with_marts
    assert cli("backtest", "--run-id", RUN, "--out", out, "--systems", "flat_banker,martingale_banker")[0] == 0
    status, printed, err = cli("backtest", "--run-id", RUN, "--out", out, "--systems", "flat_banker")
    assert status == 0 and "removed" not in printed, err  # no system mart held the run yet
    assert cli("marts", "--out", out, "--run-id", RUN)[0] == 0
    systems = "SELECT DISTINCT system FROM system_outcomes ORDER BY 1"
    assert warehouse_rows(out, systems) == [("flat_banker",)]
    status, printed, err = cli("backtest", "--run-id", RUN, "--out", out, "--systems", "flat_banker,paroli_player")
    assert status == 0, err
    assert_forgotten(out, "backtest", printed)
    assert cli("marts", "--out", out, "--run-id", RUN)[0] == 0
    assert warehouse_rows(out, systems) == [("flat_banker",), ("paroli_player",)]


def test_a_composition_in_place_of_earlier_round_ev_removes_the_composition_marts_built_from_them(cli, run_with_marts):
    out = run_with_marts
    assert cli("composition", "--run-id", RUN, "--out", out)[0] == 0
    assert cli("marts", "--out", out, "--run-id", RUN)[0] == 0
    assert warehouse_rows(out, "SELECT DISTINCT shoes FROM perfect_play") == [(12,)]
    status, printed, err = cli("composition", "--run-id", RUN, "--out", out, "--shoes", "4")
    assert status == 0, err
    assert_forgotten(out, "composition", printed)
    assert cli("marts", "--out", out, "--run-id", RUN)[0] == 0
    assert warehouse_rows(out, "SELECT DISTINCT shoes FROM perfect_play") == [(4,)]


def another_command(*args) -> None:
    """A command run as another process would: in a thread of its own, which starts with no tables kept open."""
    statuses = []
    thread = threading.Thread(target=lambda: statuses.append(main([str(arg) for arg in args])))
    thread.start()
    thread.join()
    assert statuses == [0]


@pytest.fixture
def rows_replaced_while_marts_build(monkeypatch):
    """`baccarat marts` with `command` run between its build and its commits."""
    build = engines.build_marts

    def replaced_meanwhile(*command):
        def build_then_replace(*args, **kwargs):
            built = build(*args, **kwargs)
            another_command(*command)
            return built
        monkeypatch.setattr(engines, "build_marts", build_then_replace)
    yield replaced_meanwhile
    monkeypatch.undo()


def test_marts_built_from_sessions_a_backtest_replaced_meanwhile_are_taken_back(
        cli, run_with_marts, rows_replaced_while_marts_build):
    # they were committed after the backtest removed the run's system marts: its old systems stayed in the
    # warehouse, and verify passed (a new user's trial)
    out = run_with_marts
    assert cli("backtest", "--run-id", RUN, "--out", out, "--systems", "flat_banker")[0] == 0
    rows_replaced_while_marts_build("backtest", "--run-id", RUN, "--out", out, "--systems", "paroli_player")
    status, _, err = cli("marts", "--out", out, "--run-id", RUN)
    assert status == 0 and f"warning: run {RUN!r}: rows its marts were built from were replaced meanwhile" in err
    assert "4 of them, such as system_outcomes, are left out" in err and err.count("\n") == 1
    for mart in SYSTEM_MARTS:
        assert RUN not in committed_runs_of(out, mart), mart
    assert RUN in committed_runs_of(out, "streaks")
    assert warehouse_rows(out, "SELECT count(*) FROM system_outcomes") == [(0,)]
    rows_replaced_while_marts_build("runs", "--out", out)  # nothing replaced: nothing taken back
    assert cli("marts", "--out", out, "--run-id", RUN)[0] == 0
    assert warehouse_rows(out, "SELECT DISTINCT system FROM system_outcomes") == [("paroli_player",)]


def test_marts_built_from_round_ev_a_composition_replaced_meanwhile_are_taken_back(
        cli, run_with_marts, rows_replaced_while_marts_build):
    out = run_with_marts
    assert cli("composition", "--run-id", RUN, "--out", out)[0] == 0
    rows_replaced_while_marts_build("composition", "--run-id", RUN, "--out", out, "--shoes", 4)
    status, _, err = cli("marts", "--out", out, "--run-id", RUN)
    assert status == 0 and "3 of them, such as advantage_by_depth, are left out" in err
    for mart in COMPOSITION_MARTS:
        assert RUN not in committed_runs_of(out, mart), mart
    assert warehouse_rows(out, "SELECT count(*) FROM perfect_play") == [(0,)]


def test_marts_built_from_a_run_an_overwrite_replaced_meanwhile_are_taken_back(
        cli, run_with_marts, rows_replaced_while_marts_build):
    out = run_with_marts
    rows_replaced_while_marts_build("simulate", "--shoes", 8, "--seed", 6, "--run-id", RUN, "--out", out, "--overwrite")
    status, _, err = cli("marts", "--out", out, "--run-id", RUN)
    assert status == 0 and f"{len(EVERY_MART)} of them, such as outcome_summary, are left out" in err
    for mart in ("streaks", "outcome_summary", "road_cells"):
        assert RUN not in committed_runs_of(out, mart), mart
    assert cli("marts", "--out", out, "--run-id", RUN)[0] == 0
    shoes = DeltaTable(str(out / contract("shoe_summary").table)).to_pyarrow_table(filters=[("run_id", "=", RUN)])
    assert shoes.num_rows == 8


def test_one_publish_at_a_time_reads_the_marts_and_points_the_warehouse(run_with_marts, monkeypatch):
    # a publish that read the marts before a build took some back could point the warehouse after the
    # build's own publish, serving them again
    out, target = Store.parse(str(run_with_marts)), run_with_marts / "warehouse.duckdb"
    build, first_reading, go_on = publish._build, threading.Event(), threading.Event()

    def first_waits(*args):
        if not first_reading.is_set():
            first_reading.set()
            go_on.wait(60)
        return build(*args)

    monkeypatch.setattr(publish, "_build", first_waits)
    first = threading.Thread(target=publish.publish_warehouse, args=(out, target))
    first.start()
    assert first_reading.wait(60)
    second = threading.Thread(target=publish.publish_warehouse, args=(out, target))
    second.start()
    second.join(3)
    waited = second.is_alive()
    go_on.set()
    first.join()
    second.join()
    assert waited
    assert warehouse_rows(run_with_marts, f"SELECT count(*) FROM outcome_summary WHERE run_id = '{RUN}'")[0][0] > 0


def run_rows(out, marts) -> dict[str, list[tuple]]:
    return {mart: warehouse_rows(out, f"SELECT * FROM {mart} WHERE run_id = '{RUN}' ORDER BY ALL") for mart in marts}


def delete_run_files(out, table: str) -> None:
    for file in (out / table / f"run_id={RUN}").glob("*.parquet"):
        file.unlink()


@pytest.mark.parametrize("command, table, options", [("composition", "round_ev", ()),
                                                      ("backtest", "sessions", ("--systems", "flat_banker"))])
def test_rows_written_again_as_committed_keep_the_marts_built_from_them(cli, run_with_marts, command, table, options):
    # the repair verify names for a deleted round_ev or sessions file is the same command: it wrote the committed
    # rows back byte for byte, yet removed the marts built from them, which `marts` had to build again
    out = run_with_marts
    assert cli(command, "--run-id", RUN, "--out", out, *options)[0] == 0
    assert cli("marts", "--out", out, "--run-id", RUN)[0] == 0
    built = run_rows(out, BUILT_FROM[command])
    assert all(built.values())
    delete_run_files(out, table)
    status, printed, _ = cli("verify", "--out", out)
    assert status == 1 and f"repair: baccarat {command} --run-id {RUN}" in printed
    status, printed, err = cli(command, "--run-id", RUN, "--out", out, *options)
    assert status == 0, err
    assert "removed" not in printed and f"the run's {command} marts, if built, stand" in printed
    assert cli("verify", "--out", out)[0] == 0
    assert run_rows(out, BUILT_FROM[command]) == built


@pytest.fixture
def own_files(tmp_path) -> Path:
    """A count system and a betting system of one's own, in a folder whose name holds a space: --counts and
    --systems take their paths."""
    count = yaml.safe_load(resource("conf", "counts", "banker_player_simple.yaml").read_text())
    system = yaml.safe_load(resource("conf", "systems", "flat_player.yaml").read_text())
    folder = tmp_path / "my files"
    folder.mkdir()
    (folder / "low_cards.yaml").write_text(yaml.safe_dump(count | {"name": "low_cards",
                                                                   "tags": count["tags"] | {8: -2, 9: 1}}))
    (folder / "my_player.yaml").write_text(yaml.safe_dump(system | {"name": "my_player"}))
    return folder


@pytest.mark.parametrize("command, table", [("composition", "round_ev"), ("backtest", "sessions")])
def test_the_repair_verify_names_for_a_deleted_file_pastes_and_writes_the_committed_rows_back(
        cli, spark, tmp_path, own_files, monkeypatch, command, table):
    # the line left the options to the user ("with the --shoes and --counts it was run with"): it could not be
    # pasted, and a guess of other options replaced the rows and removed the marts built from them; then it
    # repeated a count or betting system's relative path as given, which read no file pasted in another folder
    out = simulate_with_marts(spark, tmp_path / "my data", seed=5, shoes=12, partitions=2, run_id=RUN)
    options = {"composition": ("--shoes", "8", "--counts", "banker_player_simple,low_cards.yaml"),
               "backtest": ("--systems", "flat_banker", "--systems", "martingale_banker,my_player.yaml",
                            "--bankroll", "500")}
    monkeypatch.chdir(own_files)  # the job is run where its files are, given by relative paths
    assert cli(command, "--run-id", RUN, "--out", out, *options[command], "--partitions", "3")[0] == 0  # not recorded
    assert cli("marts", "--out", out, "--run-id", RUN)[0] == 0
    built = run_rows(out, BUILT_FROM[command])
    assert all(built.values())
    delete_run_files(out, table)
    monkeypatch.chdir(tmp_path)  # and its repair pasted in another folder
    status, printed, _ = cli("verify", "--out", out)
    [line] = {line.rpartition("; repair: ")[2] for line in printed.splitlines() if "data file missing" in line}
    repair = shlex.split(line)  # each deleted file's line names the same repair
    assert status == 1 and repair[:2] == ["baccarat", command]
    status, printed, err = cli(*repair[1:])
    assert status == 0, err
    assert "removed" not in printed and f"the rows written again are those committed: the run's {command} marts, " \
        "if built, stand" in printed
    assert cli("verify", "--out", out)[0] == 0
    assert run_rows(out, BUILT_FROM[command]) == built


def test_a_run_dealt_again_as_committed_keeps_its_marts_round_ev_and_sessions(cli, run_with_marts):
    # verify's repair for a deleted rounds file deals the run again with --overwrite: the same rows, byte for
    # byte, yet its marts, round_ev and sessions were removed, and the sessions needed the systems and session
    # options the backtest had been run with
    out = run_with_marts
    assert cli("composition", "--run-id", RUN, "--out", out)[0] == 0
    assert cli("backtest", "--run-id", RUN, "--out", out, "--systems", "flat_banker")[0] == 0
    assert cli("marts", "--out", out, "--run-id", RUN)[0] == 0
    built = run_rows(out, ("outcome_summary", *COMPOSITION_MARTS, *SYSTEM_MARTS))
    assert all(built.values())
    delete_run_files(out, "rounds")
    status, printed, _ = cli("verify", "--out", out)
    repair = shlex.split(printed.splitlines()[0].rpartition("repair: ")[2])
    assert status == 1 and repair[:2] == ["baccarat", "simulate"] and repair[-1] == "--overwrite"
    status, printed, err = cli(*repair[1:])
    assert status == 0, err
    assert "removed" not in printed and f"run {RUN!r} dealt again as it was committed" in printed
    assert cli("verify", "--out", out)[0] == 0
    assert run_rows(out, built) == built
    for table in ("round_ev", "sessions"):
        assert RUN in committed_runs_in(out, table), table


def test_an_overwrite_stopped_after_its_commits_leaves_none_of_the_replaced_runs_marts_round_ev_or_sessions(
        cli, run_with_marts, monkeypatch):
    # they were removed only after the new run's commits: a Ctrl-C in between left the old run's marts, round_ev
    # and sessions beside the new rows, the rerun found nothing to do, `runs` said the marts were built, verify
    # passed, and `marts` built the system and composition marts of the new run from the old run's rows
    out = run_with_marts
    assert cli("composition", "--run-id", RUN, "--out", out)[0] == 0
    assert cli("backtest", "--run-id", RUN, "--out", out, "--systems", "flat_banker")[0] == 0
    assert cli("marts", "--out", out, "--run-id", RUN)[0] == 0
    overwrite = ("simulate", "--shoes", 8, "--seed", 6, "--run-id", RUN, "--out", out, "--overwrite")

    def interrupted(*args):
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(cli_jobs, "_forget_replaced_run", interrupted)
        assert cli(*overwrite)[0] == 130
    status, printed, err = cli(*overwrite)
    assert status == 0 and "nothing to do" in printed, err
    for mart in EVERY_MART:
        assert RUN not in committed_runs_of(out, mart), mart
    for table in ("round_ev", "sessions"):
        assert RUN not in committed_runs_in(out, table), table
    status, printed, _ = cli("runs", "--out", out)
    assert status == 0 and "has no marts" in printed


@pytest.mark.parametrize("command, options", [("composition", ("--shoes", "4")),
                                              ("backtest", ("--systems", "paroli_player"))])
def test_rows_replaced_by_a_job_stopped_after_its_commit_leave_none_of_the_marts_built_from_the_earlier_ones(
        cli, run_with_marts, monkeypatch, command, options):
    out = run_with_marts
    first = ("--systems", "flat_banker") if command == "backtest" else ()
    assert cli(command, "--run-id", RUN, "--out", out, *first)[0] == 0
    assert cli("marts", "--out", out, "--run-id", RUN)[0] == 0

    def interrupted(*args):
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(cli_jobs, "_forget_stale_marts", interrupted)
        assert cli(command, "--run-id", RUN, "--out", out, *options)[0] == 130
    status, printed, err = cli(command, "--run-id", RUN, "--out", out, *options)
    assert status == 0 and "nothing to do" in printed, err
    for mart in BUILT_FROM[command]:
        assert RUN not in committed_runs_of(out, mart), mart
