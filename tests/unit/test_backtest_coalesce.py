"""The backtest's sessions from their arrays (play_sessions) and the exact start of the first session of
a range found from the rounds before it alone (coalesce.first_start_at), on hand-made rounds, without
Spark: checked against play_session applied session after session from the first round."""

from decimal import Decimal

import numpy as np
import pytest

from pipeline.backtest.coalesce import check_bounded, first_start_at, session_bound
from pipeline.errors import BaccaratError
from pipeline.play import CHECKPOINTS, ENDINGS, Round, check_exact_cents, play_session, play_sessions
from pipeline.systems import load_system

NET_HUNDREDTHS = {"banker": (95, -100, -100), "player": (-100, 100, -100), "tie": (0, 0, 800)}  # by winner B, P, T
ROUNDS_PER_SHOE = 70


def hand_made(rounds: int, seed: int) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """shoe_ids, winners and nets of `rounds` rounds drawn with baccarat's odds, 70 to a shoe."""
    winners = np.random.default_rng(seed).choice(3, size=rounds, p=(0.4586, 0.4462, 0.0952)).astype(np.int8)
    nets = {kind: np.array(by_winner, dtype=np.int64)[winners] for kind, by_winner in NET_HUNDREDTHS.items()}
    return np.arange(rounds, dtype=np.int64) // ROUNDS_PER_SHOE, winners, nets


def true_starts(system, shoe_ids, winners, nets) -> list[int]:
    """Every session's start, play_session after play_session from the first round (the reference)."""
    rounds = [Round(int(shoe), "BPT"[winner], {kind: Decimal(int(net[i])) / 100 for kind, net in nets.items()})
              for i, (shoe, winner) in enumerate(zip(shoe_ids, winners))]
    starts, position = [], 0
    while position < len(rounds):
        starts.append(position)
        position += play_session(system, rounds[position:]).rounds
    return starts


def short_sessions(name: str, **session):
    """A shipped system with a small goal and round limit: sessions end early often, so chains meet."""
    return load_system(name).with_session(**({"bankroll": "100", "goal": "30", "max_rounds": 40} | session))


def found_start(system, shoe_ids, winners, nets, target) -> tuple[int, int]:
    """The first start at or after `target`, from windows before it doubled until the chains agree, and
    the window that sufficed (`target` itself when it had to reach the first round)."""
    window = 20
    while True:
        begin = max(0, target - window)
        sliced = shoe_ids[begin:], winners[begin:], {kind: net[begin:] for kind, net in nets.items()}
        entry = first_start_at(play_sessions, system, *sliced, target - begin, run_start=begin == 0)
        if entry is not None:
            return begin + entry, target - begin
        window *= 2


@pytest.mark.parametrize("name,session", [("flat_banker", {}), ("martingale_player_32", {}),
                                          ("big_road_column", {}), ("flat_player", {"ties_count": False})])
def test_the_first_start_found_from_a_window_is_the_true_one(name, session):
    system = short_sessions(name, **session)
    shoe_ids, winners, nets = hand_made(3_000, seed=len(name))
    starts = true_starts(system, shoe_ids, winners, nets)
    windows = []
    for target in range(1_500, 2_900, 350):
        entry, window = found_start(system, shoe_ids, winners, nets, target)
        assert entry == min(s for s in starts if s >= target), target
        windows.append(window)
    assert sum(window < target for window, target in zip(windows, range(1_500, 2_900, 350))) >= len(windows) // 2


def test_a_window_where_the_chains_never_meet_finds_nothing():
    """Every session ends at its round limit: chains from neighbouring rounds stay apart for ever."""
    system = load_system("flat_banker").with_session(bankroll="100000", goal="100000", max_rounds=30)
    shoe_ids, winners, nets = hand_made(1_000, seed=3)
    assert first_start_at(play_sessions, system, shoe_ids, winners, nets, 500, run_start=False) is None
    assert first_start_at(play_sessions, system, shoe_ids, winners, nets, 500, run_start=True) == 510


def test_play_sessions_is_play_session_session_after_session():
    system = short_sessions("paroli_player", max_rounds=300)
    shoe_ids, winners, nets = hand_made(2_000, seed=11)
    sessions = play_sessions(system, shoe_ids, winners, nets, 0, 2_000)
    assert sessions["start"].tolist() == true_starts(system, shoe_ids, winners, nets)
    rounds = [Round(int(s), "BPT"[w], {"player": Decimal(int(nets["player"][i])) / 100})
              for i, (s, w) in enumerate(zip(shoe_ids, winners))]
    for index, start in enumerate(sessions["start"].tolist()):
        result = play_session(system, rounds[start:])
        assert ENDINGS[sessions["ended"][index]] == result.ended
        assert sessions["end_bankroll"][index] == result.end * 100
        assert int(sessions["wagered"][index]) == result.wagered * 100 == int(sessions["wagered_player"][index])
        assert sessions["wagered_banker"][index] == 0
        after = [sessions[f"bankroll_after_{n}"][index] for n in CHECKPOINTS]
        assert after == [value * 100 for value in result.after]
    assert ENDINGS[sessions["ended"][-1]] == "incomplete" and not sessions["complete"][-1]
    assert sessions["complete"][:-1].all() and {"goal", "ruin"} <= {ENDINGS[e] for e in sessions["ended"]}


def test_a_session_that_may_not_span_shoes_ends_with_its_shoe():
    system = short_sessions("flat_banker", bankroll="10000", goal="1000", max_rounds=None, span_shoes=False)
    shoe_ids, winners, nets = hand_made(3 * ROUNDS_PER_SHOE, seed=5)
    sessions = play_sessions(system, shoe_ids, winners, nets, 0, 2 * ROUNDS_PER_SHOE)
    assert sessions["start"].tolist() == [0, ROUNDS_PER_SHOE]
    assert [ENDINGS[e] for e in sessions["ended"]] == ["shoe_end", "shoe_end"]


def test_checkpoints_hold_the_end_bankroll_after_a_short_session():
    system = short_sessions("flat_player", goal="10")
    shoe_ids, winners, nets = np.zeros(3, np.int64), np.array([1, 0, 0], np.int8), {
        "player": np.array([100, -100, -100], np.int64)}
    sessions = play_sessions(system, shoe_ids, winners, nets, 0, 1)
    assert sessions["rounds"].tolist() == [1] and ENDINGS[sessions["ended"][0]] == "goal"
    assert all(sessions[f"bankroll_after_{n}"][0] == 11_000 for n in CHECKPOINTS)


def test_session_bound_counts_decided_rounds_when_ties_do_not_count():
    system = load_system("flat_banker").with_session(max_rounds=3, ties_count=False)
    assert session_bound(system, np.array([2, 0, 2, 2, 1, 0, 1], np.int8), 0) == 6
    assert session_bound(load_system("flat_banker").with_session(max_rounds=3), np.zeros(9, np.int8), 4) == 3


def test_a_stake_that_is_not_whole_cents_is_refused_before_play():
    system = load_system("flat_banker").with_session().model_copy(update={"unit": Decimal("0.10")})
    with pytest.raises(BaccaratError, match="flat_banker.*not a whole number of cents"):
        check_exact_cents(system, [95])
    check_exact_cents(load_system("flat_banker"), [95, -100, 0])


def test_a_spanning_session_without_a_round_limit_is_refused():
    unbounded = load_system("flat_banker").model_copy(update={"session": load_system("flat_banker").session.model_copy(
        update={"max_rounds": None})})
    with pytest.raises(BaccaratError, match="flat_banker.*max_rounds"):
        check_bounded(unbounded)
