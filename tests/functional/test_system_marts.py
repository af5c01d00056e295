"""The system marts over a simulated run's sessions (played by pipeline/play.py and committed to
OUT/sessions as the backtest job commits them): both engines, the marts commit, the warehouse and the
report's Betting systems section."""

import re
import shutil

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from played_sessions import played_sessions, rounds_of
from spark_jobs import read_table, simulate

from pipeline.bets import BET_KINDS
from pipeline.cli import main
from pipeline.marts.engines import Engine, build_system_marts
from pipeline.marts.inputs import SYSTEM_MARTS, load_run
from pipeline.report.build import build_report
from pipeline.schemas import contract
from pipeline.storage import Store
from test_report import CHARTS, assert_true_percent_ticks, drawn, mart

RUN_ID = "systems-s21-n40"
BARE_RUN = "systems-bare"
SYSTEMS = ["flat_banker", "flat_player", "martingale_player_32", "paroli_player"]


SESSIONS_SCHEMA = contract("sessions").table_schema(tuple(BET_KINDS))


def commit_sessions(folder, run_id: str) -> pl.DataFrame:
    """Sessions of SYSTEMS over the run's rounds, committed to OUT/sessions; returns them."""
    sessions = played_sessions(SYSTEMS, rounds_of(read_table(folder, run_id, "rounds")), 60)
    Store.parse(str(folder)).write_and_commit(contract("sessions").table, run_id, "part-0.parquet", sessions,
                                              SESSIONS_SCHEMA, (f"tests:{run_id}", 1))
    return pl.from_arrow(sessions)


@pytest.fixture(scope="module")
def systems_run(spark, tmp_path_factory):
    """A run with sessions rows and one without, their marts and the warehouse: (folder, sessions)."""
    folder = tmp_path_factory.mktemp("system_marts")
    simulate(spark, folder, seed=21, shoes=40, partitions=2, run_id=RUN_ID)
    simulate(spark, folder, seed=22, shoes=10, partitions=1, run_id=BARE_RUN)
    sessions = commit_sessions(folder, RUN_ID)
    assert main(["marts", "--out", str(folder)]) == 0
    return folder, sessions


def assert_engines_agree(out: Store, run_id: str) -> None:
    """Both engines build every system mart of the run, with rows, and the same rows."""
    run = load_run(out, run_id)
    duck, polars_ = (build_system_marts(engine, run) for engine in Engine)
    for name in SYSTEM_MARTS:
        assert duck[name].num_rows > 0, name
        assert_frame_equal(pl.from_arrow(polars_[name]), pl.from_arrow(duck[name]), check_dtypes=False,
                           rel_tol=1e-9, abs_tol=1e-9)


def test_both_engines_give_the_same_rows(systems_run):
    folder, _ = systems_run
    assert_engines_agree(Store.parse(str(folder)), RUN_ID)


def test_both_engines_read_the_sessions_from_a_bucket(spark, bucket):
    simulate(spark, bucket, seed=23, shoes=10, partitions=1, run_id="systems-s3")
    commit_sessions(bucket, "systems-s3")
    assert_engines_agree(Store.parse(bucket), "systems-s3")


def test_the_warehouse_holds_every_system_mart_of_the_run_with_sessions_only(systems_run):
    folder, sessions = systems_run
    complete = sessions.filter(pl.col("ended") != "incomplete")
    edge = mart(folder, "SELECT * FROM system_edge ORDER BY run_id, system")
    assert set(edge["run_id"]) == {RUN_ID} and edge["system"].to_list() == sorted(SYSTEMS)
    totals = complete.group_by("system").agg(pl.col("wagered").sum(), pl.col("net").sum()).sort("system")
    assert edge["wagered"].to_list() == totals["wagered"].to_list() and edge["net"].to_list() == totals["net"].to_list()
    outcomes = mart(folder, "SELECT system, sum(sessions) AS n, any_value(complete_sessions) AS c, "
                            "any_value(incomplete_sessions) AS i FROM system_outcomes GROUP BY system ORDER BY system")
    assert outcomes["n"].to_list() == outcomes["c"].to_list()
    played = sessions.group_by("system").len().sort("system")
    assert (outcomes["c"] + outcomes["i"]).to_list() == played["len"].to_list()
    for name in ("bankroll_paths", "drawdowns"):
        assert set(mart(folder, f"SELECT DISTINCT run_id FROM {name}")["run_id"]) == {RUN_ID}


def test_report_has_the_systems_section_for_a_run_with_sessions_only(systems_run):
    folder, _ = systems_run
    out = Store.parse(str(folder))
    page = build_report(out, RUN_ID, target=folder / "with.html").read_text(encoding="utf-8")
    assert page.count('id="systems"') == 1
    assert {"bankroll_fan", "session_endings"} <= set(re.findall(r'data-chart="([a-z_]+)"', page))
    assert "<th>Exact edge</th>" in page
    bare = build_report(out, BARE_RUN, target=folder / "bare.html").read_text(encoding="utf-8")
    assert 'id="systems"' not in bare and "bankroll_fan" not in bare


@pytest.mark.slow
def test_browser_draws_the_systems_section_with_true_ticks(systems_run, tmp_path):
    folder, _ = systems_run
    page = build_report(Store.parse(str(folder)), RUN_ID, target=tmp_path / "index.html")
    parsed, console = drawn(page, tmp_path / "profile")
    assert set(parsed.charts) == CHARTS | {"bankroll_fan", "session_endings"}
    assert all(parsed.charts.values()), [key for key, done in parsed.charts.items() if not done]
    assert console == []
    assert_true_percent_ticks(parsed.ticks["session_endings", "y"])


def test_a_run_whose_sessions_rows_are_gone_keeps_no_rows_in_the_system_marts(systems_run):
    folder, _ = systems_run
    rows = "SELECT count(*) AS n FROM {} WHERE run_id = '" + BARE_RUN + "'"
    commit_sessions(folder, BARE_RUN)
    assert main(["marts", "--out", str(folder), "--run-id", BARE_RUN]) == 0
    assert all(mart(folder, rows.format(name))["n"][0] > 0 for name in SYSTEM_MARTS)
    Store.parse(str(folder)).commit_partition(contract("sessions").table, BARE_RUN, [], SESSIONS_SCHEMA,
                                              (f"tests:{BARE_RUN}", 2))
    assert main(["marts", "--out", str(folder), "--run-id", BARE_RUN]) == 0
    assert all(mart(folder, rows.format(name))["n"][0] == 0 for name in SYSTEM_MARTS)
    assert mart(folder, "SELECT DISTINCT run_id FROM system_edge")["run_id"].to_list() == [RUN_ID]


def runs_lines(cli, folder) -> dict[str, str]:
    """`baccarat runs`: each run's marts column, by run id; and the lines under the table, by run id."""
    status, printed, err = cli("runs", "--out", folder)
    assert status == 0, err
    rows = [line.split() for line in printed.splitlines()[2:] if not line.startswith("run '")]
    notes = {line.split("'")[1]: line for line in printed.splitlines() if line.startswith("run '")}
    return {row[0]: row[5] for row in rows} | {"notes": notes}


def test_runs_shows_a_run_backtested_since_its_marts_were_built_as_incomplete_until_marts(systems_run, cli):
    """`runs` said "built" for a run whose sessions rows came after its marts (or replaced the rows its system
    marts were built from, which the backtest then removed), while the warehouse had no system mart of it."""
    folder, _ = systems_run
    commit_sessions(folder, BARE_RUN)
    listed = runs_lines(cli, folder)
    assert listed[BARE_RUN] == "incomplete" and listed[RUN_ID] == "built"
    assert list(listed["notes"]) == [BARE_RUN]
    assert listed["notes"][BARE_RUN] == (
        f"run '{BARE_RUN}' has sessions rows that none of their marts ({', '.join(SYSTEM_MARTS)}) hold yet: "
        f"`baccarat marts --run-id {BARE_RUN} --out {folder}` builds them")
    assert cli("runs", "--out", folder, "--json")[1].count('"marts": false') == 1
    assert cli("marts", "--run-id", BARE_RUN, "--out", folder)[0] == 0
    listed = runs_lines(cli, folder)
    assert listed[BARE_RUN] == listed[RUN_ID] == "built" and listed["notes"] == {}


def test_a_copy_without_the_sessions_log_is_named_by_verify_and_marts_not_passed_over(systems_run, cli, tmp_path):
    """verify said every log checks out, and marts emptied the system marts without a word."""
    folder, _ = systems_run
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy, symlinks=True)
    shutil.rmtree(copy / "sessions" / "_delta_log")
    status, printed, err = cli("verify", "--out", copy)
    lost = f"{copy / 'sessions'} holds data files of "  # of RUN_ID's, and BARE_RUN's when an earlier test made them
    assert status == 0 and printed.splitlines()[-1].startswith(f"note: {lost}"), printed
    assert "but no log, so no reader sees their rows" in printed
    status, printed, err = cli("marts", "--out", copy, "--run-id", RUN_ID)
    assert status == 0 and err.startswith(f"warning: {lost}") and err.count("\n") == 1, err
