"""The betting-system marts (pipeline/marts/sql/system_*.sql, bankroll_paths.sql, drawdowns.sql and
pipeline/marts/systems_polars.py) on hand-made sessions tables, in both engines, without Spark."""

import random
from decimal import Decimal
from types import SimpleNamespace

import duckdb
import polars as pl
import pyarrow as pa
import pytest
from polars.testing import assert_frame_equal

from played_sessions import CHECKPOINTS, played_sessions

from pipeline.marts import systems_duckdb, systems_polars
from pipeline.marts.inputs import SYSTEM_MARTS, RunInput, rated_endings
from pipeline.play import Round
from pipeline.rule_sets import load_rule_set
from pipeline.schemas import contract
from pipeline.systems import load_system

EV = {"banker": -0.0106, "player": -0.0124, "tie": -0.1436}


def session(system: str, ended: str = "goal", net: str = "0", wagered: str = "10", banker: str = "0",
            player: str = "0", drawdown: str = "0", after: str | None = None) -> dict:
    """One sessions row; every checkpoint holds `after` (default: the end bankroll), null if incomplete."""
    end = Decimal(1000) + Decimal(net)
    checkpoint = None if ended == "incomplete" else Decimal(after) if after is not None else end
    return {"system": system, "first_shoe": 0, "first_round": 1, "start_bankroll": Decimal(1000),
            "end_bankroll": end, "net": Decimal(net), "wagered": Decimal(wagered),
            "wagered_banker": Decimal(banker), "wagered_player": Decimal(player), "rounds": 1, "stakes": 1,
            "max_drawdown": Decimal(drawdown), "ended": ended, "table_max_hits": 0,
            **{f"bankroll_after_{n}": checkpoint for n in CHECKPOINTS}}


def table(rows: list[dict]) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=contract("sessions").arrow(()))


def terms(units: dict[str, str], bets: dict[str, str | None]) -> pa.Table:
    systems = sorted(units)
    return pa.table({"system": systems, "unit": pa.array([Decimal(units[s]) for s in systems], pa.decimal128(18, 2)),
                     "ev_banker": [EV["banker"]] * len(systems), "ev_player": [EV["player"]] * len(systems),
                     "ev_bet": pa.array([EV.get(bets[s]) for s in systems], pa.float64())})


def both_engines(sessions: pa.Table, system_terms: pa.Table) -> dict[str, pl.DataFrame]:
    """The marts in DuckDB, after checking that Polars gives the same rows in the same order (exact decimals
    equal, floats within 1e-9)."""
    con = duckdb.connect()
    con.register("sessions", sessions)
    con.register("system_terms", system_terms)
    con.register("endings", rated_endings())
    in_duckdb = systems_duckdb.system_marts(con)
    in_polars = systems_polars.system_marts(pl.from_arrow(sessions).lazy(), pl.from_arrow(system_terms).lazy(),
                                            pl.from_arrow(rated_endings()).lazy())
    frames = {}
    for name in SYSTEM_MARTS:
        expected, actual = pl.from_arrow(in_duckdb[name]), pl.from_arrow(in_polars[name])
        assert actual.columns == expected.columns == contract(name).arrow(()).names[2:], name
        assert_frame_equal(actual, expected, check_dtypes=False, rel_tol=1e-9, abs_tol=1e-9)
        frames[name] = expected
    return frames


def test_outcome_shares_have_wilson_intervals_and_leave_incomplete_sessions_out():
    rows = [session("a", "goal")] * 3 + [session("a", "ruin"), session("a", "incomplete")]
    outcomes = both_engines(table(rows), terms({"a": "10"}, {"a": "banker"}))["system_outcomes"]
    assert outcomes["ending"].to_list() == ["goal", "ruin", "stop_loss", "max_rounds", "shoe_end"]
    assert outcomes["sessions"].to_list() == [3, 1, 0, 0, 0]
    assert set(outcomes["complete_sessions"]) == {4} and set(outcomes["incomplete_sessions"]) == {1}
    goal = outcomes.row(0, named=True)
    assert goal["share"] == 0.75
    # the textbook Wilson interval of 3 successes in 4 trials at 95 %
    assert goal["share_low"] == pytest.approx(0.3006, abs=1e-4)
    assert goal["share_high"] == pytest.approx(0.9544, abs=1e-4)
    none = outcomes.row(2, named=True)
    assert none["share"] == 0 and none["share_low"] == pytest.approx(0)
    assert none["share_high"] == pytest.approx(0.4899, abs=1e-4)


def test_a_share_of_0_or_1_has_its_interval_end_exactly_there():
    """Five sessions, all to the goal: the interval's formula gave the goal share an upper end of
    1.0000000000000002 and the endings none reached a lower end of -3e-17, in both engines."""
    outcomes = both_engines(table([session("a", "goal")] * 5), terms({"a": "10"}, {"a": "banker"}))["system_outcomes"]
    goal, *others = outcomes.iter_rows(named=True)
    assert goal["share"] == 1 and goal["share_high"] == 1.0 and 0 < goal["share_low"] < 1
    assert all(row["share"] == 0 and row["share_low"] == 0.0 and 0 < row["share_high"] < 1 for row in others)


def test_a_system_with_only_incomplete_sessions_has_counts_and_no_rates():
    frames = both_engines(table([session("a", "incomplete")]), terms({"a": "10"}, {"a": "banker"}))
    outcomes = frames["system_outcomes"]
    assert outcomes["complete_sessions"].to_list() == [0] * 5 and outcomes["share"].null_count() == 5
    assert all(frames[name].is_empty() for name in ("system_edge", "bankroll_paths", "drawdowns"))


def test_edge_is_the_ratio_of_totals_with_a_delta_method_interval():
    rows = [session("a", net="-10", wagered="10", banker="10"), session("a", net="9.50", wagered="10", banker="10"),
            session("a", net="-30", wagered="30", banker="30")]
    edge = both_engines(table(rows), terms({"a": "10"}, {"a": "banker"}))["system_edge"].row(0, named=True)
    assert edge["sessions"] == 3 and edge["wagered"] == Decimal("50") and edge["net"] == Decimal("-30.50")
    ratio = -30.5 / 50
    squares = (-10 - ratio * 10) ** 2 + (9.5 - ratio * 10) ** 2 + (-30 - ratio * 30) ** 2
    half_width = 1.96 * (squares / 2 / 3) ** 0.5 / (50 / 3)
    assert edge["net_per_wagered"] == pytest.approx(ratio, rel=1e-12)
    assert edge["net_per_wagered_low"] == pytest.approx(ratio - half_width, rel=1e-12)
    assert edge["net_per_wagered_high"] == pytest.approx(ratio + half_width, rel=1e-12)
    assert edge["exact_edge"] == pytest.approx(EV["banker"], rel=1e-12)
    assert edge["edge_in_interval"] is True


def test_exact_edge_weighs_each_side_by_what_was_staked_on_it():
    rows = [session("chooser", net="5", wagered="40", banker="30", player="10"),
            session("tie", net="-10", wagered="10"), session("tie", net="80", wagered="10")]
    system_terms = terms({"chooser": "10", "tie": "10"}, {"chooser": None, "tie": "tie"})
    edge = both_engines(table(rows), system_terms)["system_edge"]
    assert edge["system"].to_list() == ["chooser", "tie"]
    assert edge["exact_edge"][0] == pytest.approx((30 * EV["banker"] + 10 * EV["player"]) / 40, rel=1e-12)
    assert edge["exact_edge"][1] == pytest.approx(EV["tie"], rel=1e-12)
    assert edge["net_per_wagered_low"][0] is None and edge["edge_in_interval"][0] is None  # one session: no spread


def test_bankroll_percentiles_are_the_smallest_values_with_enough_sessions_at_or_below():
    rows = [session("a", after=str(value)) for value in range(1, 21)]
    paths = both_engines(table(rows), terms({"a": "10"}, {"a": "banker"}))["bankroll_paths"]
    assert paths["after_rounds"].to_list() == list(CHECKPOINTS)
    first = paths.row(0, named=True)
    assert first["sessions"] == 20 and first["mean"] == 10.5
    assert [first[p] for p in ("p05", "p25", "p50", "p75", "p95")] == [Decimal(v) for v in (1, 5, 10, 15, 19)]


def test_drawdowns_are_binned_in_whole_stake_units():
    rows = [session("a", drawdown=d) for d in ("0", "9.99", "10", "25", "25.50")]
    rows.append(session("a", "incomplete", drawdown="90"))
    drawdowns = both_engines(table(rows), terms({"a": "10"}, {"a": "banker"}))["drawdowns"]
    assert drawdowns["drawdown_units"].to_list() == [0, 1, 2]
    assert drawdowns["sessions"].to_list() == [2, 1, 2]
    assert drawdowns["share"].to_list() == pytest.approx([0.4, 0.2, 0.4])
    assert drawdowns["share_at_or_above"].to_list() == pytest.approx([1.0, 0.6, 0.4])


def test_engines_agree_on_sessions_played_by_shipped_systems():
    nets = {"B": {"banker": Decimal("0.95"), "player": Decimal(-1), "tie": Decimal(-1)},
            "P": {"banker": Decimal(-1), "player": Decimal(1), "tie": Decimal(-1)},
            "T": {"banker": Decimal(0), "player": Decimal(0), "tie": Decimal(8)}}
    draw = random.Random(21)
    rounds = [Round(i // 80, winner, nets[winner]) for i, winner in
              enumerate(draw.choices("BPT", weights=[0.4586, 0.4462, 0.0952], k=4000))]
    names = ["flat_banker", "flat_player", "martingale_player_32", "paroli_player", "flat_tie"]
    system_terms = terms({name: str(load_system(name).unit) for name in names},
                         {name: load_system(name).bet for name in names})
    frames = both_engines(played_sessions(names, rounds, 40), system_terms)
    per_system = frames["system_outcomes"].unique("system")
    assert (per_system["complete_sessions"] + per_system["incomplete_sessions"]).to_list() == [40] * 5
    assert frames["system_edge"]["sessions"].sum() == per_system["complete_sessions"].sum()
    shares = frames["drawdowns"].group_by("system").agg(pl.col("share").sum())
    assert shares["share"].to_list() == pytest.approx([1.0] * 5)


def run_of(rules: str) -> RunInput:
    """A run of a fixed tableau as far as system_terms reads it: its id, its rule set, no strategy pair."""
    return RunInput(None, SimpleNamespace(run_id="r1", strategies=None), load_rule_set(rules), {})


def test_system_terms_give_each_shipped_system_its_unit_and_the_exact_evs_of_its_bets():
    run = run_of("punto_banco")
    found = pl.from_arrow(run.system_terms(["flat_tie", "follow_the_shoe"])).rows_by_key("system", named=True)
    exact = {kind: float(odds.ev) for kind, odds in run.reference.bets.items()}
    tie, chooser = found["flat_tie"][0], found["follow_the_shoe"][0]
    assert tie["unit"] == Decimal(str(load_system("flat_tie").unit)) and tie["ev_bet"] == exact["tie"]
    assert tie["ev_banker"] == exact["banker"] == pytest.approx(-0.010579, abs=1e-6)
    assert chooser["ev_bet"] is None and chooser["ev_player"] == exact["player"]


@pytest.mark.slow
def test_edge_intervals_cover_the_exact_edge_about_95_times_in_100():
    """400 independent replications of 50 flat Banker sessions over rounds dealt independently with the
    exact chances of punto banco: the delta-method interval of each must hold the exact edge in about
    95 % of them (4 standard errors of a binomial share: 0.906 to 0.994)."""
    run = run_of("punto_banco")
    chances = {"B": run.reference.outcomes["banker"], "P": run.reference.outcomes["player"],
               "T": run.reference.outcomes["tie"]}
    nets = {"B": {"banker": Decimal("0.95")}, "P": {"banker": Decimal(-1)}, "T": {"banker": Decimal(0)}}
    draw, replications = random.Random(95), []
    for replication in range(400):
        rounds = [Round(0, winner, nets[winner]) for winner in
                  draw.choices(list(chances), weights=[float(p) for p in chances.values()], k=2000)]
        sessions = played_sessions(["flat_banker"], rounds, 50, checkpoints=False)
        replications.append(sessions.set_column(0, "system", pa.array([f"r{replication:03d}"] * sessions.num_rows)))
    names = [f"r{replication:03d}" for replication in range(400)]
    system_terms = pa.table({"system": names, "unit": pa.array([Decimal(10)] * 400, pa.decimal128(18, 2)),
                             "ev_banker": [float(run.reference.bets["banker"].ev)] * 400,
                             "ev_player": [float(run.reference.bets["player"].ev)] * 400,
                             "ev_bet": [float(run.reference.bets["banker"].ev)] * 400})
    edge = both_engines(pa.concat_tables(replications), system_terms)["system_edge"]
    assert edge.height == 400 and set(edge["sessions"]) == {50}
    assert 0.906 <= edge["edge_in_interval"].mean() <= 0.994


def test_a_system_from_a_file_of_its_own_has_no_unit_nor_bet_and_no_drawdown_rows():
    """A backtest may play a system from a .yaml path: only shipped systems' units and bets are known."""
    system_terms = run_of("punto_banco").system_terms(["flat_banker", "my_banker", "my_tie"])
    found = pl.from_arrow(system_terms)
    assert found["unit"].to_list() == [Decimal(10), None, None] and found["ev_bet"].null_count() == 2
    rows = [session(name, net="-10", wagered="10", banker="10" if name != "my_tie" else "0", drawdown="10")
            for name in ("flat_banker", "my_banker", "my_tie") for _ in range(2)]
    frames = both_engines(table(rows), system_terms)
    assert frames["drawdowns"]["system"].to_list() == ["flat_banker"]
    edge = frames["system_edge"]
    assert edge["exact_edge"][1] == pytest.approx(float(run_of("punto_banco").reference.bets["banker"].ev))
    assert edge["exact_edge"][2] is None and edge["net_per_wagered"][2] == -1.0
    assert frames["system_outcomes"]["complete_sessions"].to_list() == [2] * 15
