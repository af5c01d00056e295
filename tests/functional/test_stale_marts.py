"""`composition` and `backtest` in place of a run's earlier round_ev or sessions rows: the run's marts
built from the earlier rows go, and OUT's warehouse is published again, so that neither serves figures
of rows that are gone (pipeline/marts/replaced.py). Before, system_outcomes kept a system the sessions no
longer held, and perfect_play the shoes of an earlier composition, until the next `baccarat marts`."""

import duckdb
import pytest
from deltalake import DeltaTable
from spark_jobs import simulate_with_marts

from pipeline.marts.inputs import COMPOSITION_MARTS, SYSTEM_MARTS
from pipeline.schemas import contract

RUN = "stale-s5-n12"
BUILT_FROM = {"composition": COMPOSITION_MARTS, "backtest": SYSTEM_MARTS}


def warehouse_rows(out, query: str) -> list[tuple]:
    with duckdb.connect(str(out / "warehouse.duckdb"), read_only=True) as con:
        return con.sql(query).fetchall()


def committed_runs_of(out, mart: str) -> set[str]:
    return {p["run_id"] for p in DeltaTable(str(out / contract(mart).table)).partitions()}


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
