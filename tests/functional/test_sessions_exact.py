"""Sessions played over simulated shoes against the exact risk of ruin (pipeline/risk.py).

The exact values assume rounds dealt independently from a full shoe; real shoes are dealt without
replacement, so the agreement within 4 standard errors is also a bound on the shoe effects
(docs/betting-systems.md, "Exact against simulated"). Sessions are short (a bankroll of 6 units and a
goal of 3), so one run gives every system more than 100,000 of them.
"""

from decimal import Decimal
from fractions import Fraction
from math import sqrt

import numpy as np
import polars as pl
import pytest

from pipeline.exact import exact_odds
from pipeline.risk import RiskQuestion, net_distribution, risk
from pipeline.rule_sets import load_rule_set
from pipeline.session_kernel import play_sessions
from pipeline.systems import System, known_systems, load_system
from tests.functional.spark_jobs import read_table, simulate

pytestmark = pytest.mark.slow
SHOES = 30_000
MOST_STANDARD_ERRORS = 4
GOAL, RUIN = 0, 1  # pipeline/play.py's ENDINGS
BETS = ("banker", "player", "tie")
# system, bankroll and goal in units: short sessions; then sessions that are one Martingale cycle (the
# bankroll covers every doubling the table allows and the goal is reached by the cycle's first win)
CASES = [(name, 6, 3) for name in ("flat_banker", "flat_player", "flat_tie", "martingale_banker",
                                    "martingale_player_32", "martingale_player_512")]
CYCLES = [("martingale_banker", 31, Fraction(1, 20)), ("martingale_player_32", 63, 1),
          ("martingale_player_512", 1023, 1)]


@pytest.fixture(scope="module")
def rounds(spark, tmp_path_factory):
    out = tmp_path_factory.mktemp("sessions_exact")
    record = simulate(spark, out, seed=21, shoes=SHOES, partitions=2)
    table = read_table(out, record.run_id, "rounds").sort("shoe_id", "round")
    winners = table["outcome"].replace_strict({"B": 0, "P": 1, "T": 2}, return_dtype=pl.Int8).to_numpy()
    nets = {bet: (table[f"net_{bet}"] * 100).cast(pl.Int64).to_numpy() for bet in BETS}
    return table["shoe_id"].to_numpy(), winners, nets


def _session(name: str, bankroll, goal) -> System:
    """The shipped system with a bankroll and goal in units, and no stop-loss or round limit."""
    system = load_system(name)
    document = system.model_dump(exclude_unset=True)
    document["session"] = {"bankroll": _money(system, bankroll), "goal": _money(system, goal), "span_shoes": True}
    return System.model_validate(document)


def _money(system: System, units) -> Decimal:
    units = Fraction(units)
    return system.unit * units.numerator / units.denominator


def _exact(system: System, bankroll, goal):
    kind = system.progression.kind
    table_max = Fraction(system.table.maximum / system.unit) if kind == "martingale" else None
    question = RiskQuestion(system.bet, kind, Fraction(bankroll), Fraction(goal), table_max)
    return risk(question, net_distribution(load_rule_set("punto_banco"), system.bet))


def _standard_errors(sample: np.ndarray, expected: float, spread: float | None = None) -> float:
    """How many standard errors the sample's mean lies from `expected`."""
    spread = sample.std(ddof=1) if spread is None else spread
    return (sample.mean() - expected) / (spread / sqrt(len(sample)))


def _played(rounds, system: System) -> dict[str, np.ndarray]:
    shoe_ids, winners, nets = rounds
    played = play_sessions(system, shoe_ids, winners, nets, 0, len(winners))
    complete = played["complete"]
    return {name: column[complete] for name, column in played.items()}


@pytest.mark.parametrize("name, bankroll, goal", CASES)
def test_simulated_sessions_agree_with_the_exact_risk(rounds, name, bankroll, goal):
    system = _session(name, bankroll, goal)
    played, answer = _played(rounds, system), _exact(system, bankroll, goal)
    assert len(played["ended"]) >= 100_000
    p_goal = float(answer.goal_reached.value)
    reached = (played["ended"] == GOAL).astype(float)
    assert set(np.unique(played["ended"])) <= {GOAL, RUIN}
    unit = float(system.unit) * 100
    net = (played["end_bankroll"] - played["start_bankroll"]) / unit
    wagered = played["wagered"] / unit
    errors = {"P(goal)": _standard_errors(reached, p_goal, sqrt(p_goal * (1 - p_goal))),
              "rounds": _standard_errors(played["rounds"].astype(float), float(answer.rounds.value)),
              "net": _standard_errors(net, float(answer.expected_net.value)),
              "Wald": _standard_errors(net - float(answer.edge) * wagered, 0.0)}
    print(f"{name} {bankroll} -> +{goal} units, {len(reached):,} sessions: P(goal) {reached.mean():.5f} "
          f"exact {p_goal:.5f}; rounds {played['rounds'].mean():.3f} exact {float(answer.rounds.value):.3f}; "
          + ", ".join(f"{what} {value:+.2f} SE" for what, value in errors.items()))
    assert all(abs(value) <= MOST_STANDARD_ERRORS for value in errors.values()), errors


@pytest.mark.parametrize("name, bankroll, goal", CYCLES)
def test_a_martingale_loses_a_cycle_as_often_as_the_exact_chain_says(rounds, name, bankroll, goal):
    system = _session(name, bankroll, goal)
    played, answer = _played(rounds, system), _exact(system, bankroll, goal)
    assert answer.first_cycle is not None
    losing = float(answer.first_cycle.losing)
    ruined = (played["ended"] == RUIN).astype(float)
    assert len(ruined) >= 100_000
    assert abs(float(answer.goal_reached.complement().value) - losing) < 1e-12  # the session is one cycle
    error = _standard_errors(ruined, losing, sqrt(losing * (1 - losing)))
    print(f"{name}: {len(ruined):,} cycles, losing {ruined.mean():.6f} exact {losing:.6f} ({error:+.2f} SE)")
    assert abs(error) <= MOST_STANDARD_ERRORS


@pytest.mark.parametrize("name", known_systems())
def test_every_shipped_system_loses_the_exact_edge_of_what_it_stakes(rounds, name):
    """Wald's identity, system by system, with each system's own sessions (its shipped bankroll, goal,
    limits and chooser): the mean of net - (the exact EV of each bet x what was staked on it) over the
    sessions is 0 within 4 standard errors, whatever the progression."""
    system = load_system(name)
    played = _played(rounds, system)
    evs = {kind: float(odds.ev) for kind, odds in exact_odds(load_rule_set("punto_banco")).bets.items()}
    on_sides = played["wagered_banker"] + played["wagered_player"]
    rest = evs[system.bet] * (played["wagered"] - on_sides) if isinstance(system.bet, str) else 0.0
    expected = evs["banker"] * played["wagered_banker"] + evs["player"] * played["wagered_player"] + rest
    surplus = (played["end_bankroll"] - played["start_bankroll"] - expected) / (float(system.unit) * 100)
    assert len(surplus) >= 1_000
    error = _standard_errors(surplus, 0.0)
    print(f"{name}: {len(surplus):,} sessions, net less the exact edge of the stakes {surplus.mean():+.4f} "
          f"units a session ({error:+.2f} SE)")
    assert abs(error) <= MOST_STANDARD_ERRORS
