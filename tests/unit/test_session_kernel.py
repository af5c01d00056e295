"""The compiled session loop against pipeline/play.py's play_session, the reference in exact decimals.

Random shoes of random rounds, every shipped system and hand-made ones covering every progression,
at_max, chooser and session rule; sessions played one after the other by the reference, as the
kernel plays them (docs/betting-systems.md).
"""

from decimal import Decimal

import numpy as np
import pytest

from pipeline.errors import BaccaratError
from pipeline.play import CHECKPOINTS, ENDINGS, WINNER_CODES, Round, play_session
from pipeline import session_kernel
from pipeline.session_kernel import play_sessions
from pipeline.systems import CHOOSERS, DERIVED_ROADS, PROGRESSIONS, System, known_systems, load_system

# the net of one unit, in hundredths, by winner (Banker, Player, tie): punto banco's three main bets
NETS = {"banker": (95, -100, 0), "player": (-100, 100, 0), "tie": (-100, -100, 800)}


def _random_rounds(generator: np.random.Generator, shoes: int) -> tuple[np.ndarray, np.ndarray, dict]:
    lengths = generator.integers(1, 40, size=shoes)
    shoe_ids = np.repeat(np.arange(100, 100 + shoes, dtype=np.int64), lengths)
    winners = generator.choice(3, size=len(shoe_ids), p=[0.46, 0.445, 0.095]).astype(np.int8)
    return shoe_ids, winners, {kind: np.array(table, dtype=np.int64)[winners] for kind, table in NETS.items()}


def _rounds(shoe_ids, winners, nets) -> list[Round]:
    return [Round(int(shoe), WINNER_CODES[winner], {kind: Decimal(int(net[index])) / 100 for kind, net in nets.items()})
            for index, (shoe, winner) in enumerate(zip(shoe_ids, winners))]


def _reference(system: System, rounds: list[Round], first: int, stop: int) -> list[dict]:
    """play_session over and over, each session from the round after the last one consumed and
    seeing the rounds before it."""
    sessions, start = [], first
    while start < min(stop, len(rounds)):
        result = play_session(system, rounds[start:], rounds[:start])
        after = [play_session(system, rounds[start:start + min(n, result.rounds)], rounds[:start]).end
                 for n in CHECKPOINTS]
        sessions.append({"start": start, "rounds": result.rounds, "stakes": result.stakes,
                         "table_max_hits": result.table_max_hits, "end_bankroll": _cents(result.end),
                         "start_bankroll": _cents(result.start), "wagered": _cents(result.wagered),
                         "max_drawdown": _cents(result.max_drawdown), "ended": result.ended,
                         "complete": result.ended != "incomplete",
                         **{f"bankroll_after_{n}": _cents(money) for n, money in zip(CHECKPOINTS, after)}})
        start += result.rounds
    return sessions


def _cents(money: Decimal) -> int:
    value = money * 100
    assert value == int(value)
    return int(value)


def _kernel(system, shoe_ids, winners, nets, first, stop) -> list[dict]:
    played = play_sessions(system, shoe_ids, winners, nets, first, stop)
    lengths = {len(column) for column in played.values()}
    assert len(lengths) == 1
    sessions = []
    for index in range(lengths.pop()):
        session = {name: column[index].item() for name, column in played.items()}
        session["ended"] = ENDINGS[session["ended"]]
        sessions.append(session)
    return sessions


def _system(name: str, bet, progression: dict, maximum="80", **session) -> System:
    settings = {"bankroll": "100", "goal": "60", **session}
    return System.model_validate({"name": name, "bet": bet, "progression": progression, "unit": "2",
                                  "table": {"minimum": "1", "maximum": maximum}, "session": settings})


def _hand_made() -> list[System]:
    systems = [_system(f"{kind}_{at_max}", "banker", {"kind": kind, "at_max": at_max}, maximum="16")
               for kind in PROGRESSIONS for at_max in ("stay", "reset")]
    systems += [_system("paroli_2", "player", {"kind": "paroli", "paroli_wins": 2}),
                _system("labouchere_short", "player", {"kind": "labouchere", "line": [2], "at_max": "stay"},
                        maximum="7"),
                _system("labouchere_long", "banker", {"kind": "labouchere", "line": [1, 1, 2, 3, 5, 1]}),
                _system("ties_do_not_count", "tie", {"kind": "flat"}, max_rounds=7, ties_count=False),
                _system("one_shoe", "player", {"kind": "martingale"}, span_shoes=False, goal="400"),
                _system("stop_loss", "banker", {"kind": "dalembert"}, stop_loss="10", max_rounds=40)]
    for choose in CHOOSERS[:-1]:
        systems += [_system(f"{choose}_{first}", {"choose": choose, "first": first}, {"kind": "fibonacci"})
                    for first in ("banker", "player")]
    systems += [_system(f"derived_{road}", {"choose": "derived_road_colour", "road": road, "first": "player"},
                        {"kind": "oscars_grind"}, goal="40") for road in DERIVED_ROADS]
    return systems


def _shipped() -> list[System]:
    return [load_system(name).with_session(bankroll=Decimal(100), goal=Decimal(50)) for name in known_systems()]


def _compare(system, shoe_ids, winners, nets, first, stop):
    expected = _reference(system, _rounds(shoe_ids, winners, nets), first, stop)
    played = _kernel(system, shoe_ids, winners, nets, first, stop)
    assert [{key: session[key] for key in expected[0]} for session in played] == expected, system.name
    for session in played:
        assert session["wagered_banker"] + session["wagered_player"] <= session["wagered"]
    return played


@pytest.mark.parametrize("system", _shipped() + _hand_made(), ids=lambda system: system.name)
def test_kernel_plays_as_play_session_does(system):
    generator = np.random.default_rng(abs(hash(system.name)) % 2**32)
    seen = set()
    for _ in range(8):
        shoe_ids, winners, nets = _random_rounds(generator, int(generator.integers(1, 8)))
        first = int(generator.integers(0, 5)) % len(winners)
        stop = int(generator.integers(first, len(winners) + 3))
        seen.update(session["ended"] for session in _compare(system, shoe_ids, winners, nets, first, stop))
    assert seen  # every system played some sessions


def test_the_random_sequences_reach_every_ending_and_the_table_maximum():
    generator = np.random.default_rng(7)
    endings, hits = set(), 0
    for system in _hand_made():
        shoe_ids, winners, nets = _random_rounds(generator, 12)
        played = _compare(system, shoe_ids, winners, nets, 0, len(winners))
        endings.update(session["ended"] for session in played)
        hits += sum(session["table_max_hits"] for session in played)
    assert endings == set(ENDINGS)
    assert hits > 0


def test_the_wagered_split_follows_the_side_staked():
    shoe_ids = np.zeros(6, dtype=np.int64)
    winners = np.array([0, 0, 1, 2, 1, 0], dtype=np.int8)
    nets = {kind: np.array(table, dtype=np.int64)[winners] for kind, table in NETS.items()}
    follow = _system("follow", {"choose": "follow_last_winner", "first": "player"}, {"kind": "flat"}, goal="500")
    played = play_sessions(follow, shoe_ids, winners, nets, 0, 6)
    # sides staked: player (no winner yet), banker, banker, player, player, player
    assert (played["wagered_banker"][0], played["wagered_player"][0]) == (400, 800)
    banker = play_sessions(_system("flat_b", "banker", {"kind": "flat"}, goal="500"), shoe_ids, winners, nets, 0, 6)
    assert (banker["wagered_banker"][0], banker["wagered_player"][0]) == (1200, 0)


def test_an_empty_range_plays_no_session():
    shoe_ids, winners, nets = _random_rounds(np.random.default_rng(1), 3)
    for first, stop in ((4, 4), (5, 2), (len(winners), len(winners) + 10)):
        played = play_sessions(_shipped()[0], shoe_ids, winners, nets, first, stop)
        assert all(len(column) == 0 for column in played.values())


def test_a_session_running_past_the_arrays_is_incomplete():
    shoe_ids = np.repeat(np.arange(3, dtype=np.int64), 10)
    winners = np.zeros(30, dtype=np.int8)  # Banker every round: flat player loses 2 a round from 100
    nets = {kind: np.array(table, dtype=np.int64)[winners] for kind, table in NETS.items()}
    system = _system("flat_p", "player", {"kind": "flat"})
    played = play_sessions(system, shoe_ids, winners, nets, 25, 26)  # starts before stop, runs past it
    assert ENDINGS[played["ended"][0]] == "incomplete" and not played["complete"][0]
    assert (played["start"][0], played["rounds"][0], played["end_bankroll"][0]) == (25, 5, 10000 - 5 * 200)
    assert played["bankroll_after_10"][0] == played["end_bankroll"][0]


def test_a_stake_that_does_not_settle_in_whole_cents_is_refused():
    shoe_ids, winners, nets = _random_rounds(np.random.default_rng(2), 2)
    system = System.model_validate({"name": "penny_banker", "bet": "banker", "progression": {"kind": "flat"},
                                    "unit": "0.01", "table": {"minimum": "0.01", "maximum": "1"},
                                    "session": {"bankroll": "1", "goal": "1"}})
    with pytest.raises(BaccaratError, match="penny_banker"):
        play_sessions(system, shoe_ids, winners, nets, 0, len(winners))


def test_the_exact_cents_check_sees_a_net_whose_remainder_only_one_round_has():
    """The check looks at one net of each remainder modulo 100, found in one compiled pass: a single
    round whose net has another remainder, anywhere and negative, is refused as every such round is."""
    shoe_ids, winners, nets = _random_rounds(np.random.default_rng(3), 20)
    system = System.model_validate({"name": "penny_player", "bet": "player", "progression": {"kind": "flat"},
                                    "unit": "0.01", "table": {"minimum": "0.01", "maximum": "1"},
                                    "session": {"bankroll": "1", "goal": "1"}})
    play_sessions(system, shoe_ids, winners, nets, 0, len(winners))  # -100, 0 and 100: whole cents
    nets["player"][len(winners) - 7] = -250  # -2.5 units: half a cent of a one-cent stake
    with pytest.raises(BaccaratError, match="penny_player"):
        play_sessions(system, shoe_ids, winners, nets, 0, len(winners))


@pytest.mark.parametrize("system", [system for system in _shipped() + _hand_made() if not isinstance(system.bet, str)],
                         ids=lambda system: system.name)
def test_from_any_round_and_across_calls_the_kernel_carries_the_shoes_roads(system, monkeypatch):
    """A session may start mid-shoe (a task's entry, or a call after a full batch of rows): the road
    it chooses from is the shoe's so far, built from the rounds before it, then carried on."""
    shoe_ids, winners, nets = _random_rounds(np.random.default_rng(5), 4)
    for first in range(0, len(winners), 3):
        _compare(system, shoe_ids, winners, nets, first, len(winners))
    monkeypatch.setattr(session_kernel, "_ROWS_PER_CALL", 2)
    _compare(system, shoe_ids, winners, nets, 1, len(winners))
