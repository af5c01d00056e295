"""Each range's first session found by speculation with verification (pipeline/backtest/entries.py),
on hand-made rounds, without Spark: ranges played from guesses by the compiled loop and settled,
checked against play_session applied session after session from the first round. A round's key
here is its index."""

from decimal import Decimal

import numpy as np
import pytest

from pipeline.backtest.entries import check_bounded, play_range, settle, wrong_ranges
from pipeline.errors import BaccaratError
from pipeline.play import Round, check_exact_cents, play_session
from pipeline.systems import load_system

NET_HUNDREDTHS = {"banker": (95, -100, -100), "player": (-100, 100, -100), "tie": (0, 0, 800)}  # by winner B, P, T
ROUNDS_PER_SHOE = 71  # guesses begin with a shoe: none after the first on a multiple of 30 before round 2,130


def hand_made(rounds: int, seed: int) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """shoe_ids, winners and nets of `rounds` rounds drawn with baccarat's odds, 71 to a shoe."""
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
        position += play_session(system, rounds[position:], rounds[:position]).rounds
    return starts


class Tasks:
    """The backtest's tasks over the arrays, as Spark would run them: each range played by play_range
    from a guess `lookback` rounds before it (or from the entries asked), over arrays that begin with
    the first round of that round's shoe, as a task reads whole shoes; `replayed` keeps which ranges
    each round of replays asked for."""

    def __init__(self, systems, arrays, range_rounds: int, lookback: int):
        self.systems, self.arrays, self.lookback, self.replayed = systems, arrays, lookback, []
        rounds = len(arrays[0])
        self.ranges = [(first, min(first + range_rounds, rounds)) for first in range(0, rounds, range_rounds)]
        self.keys = np.arange(rounds + 1)  # a round's key is its index; the last one, the run's end

    def play(self, index: int, entries: dict | None = None) -> dict:
        first, last = self.ranges[index]
        shoe_ids, winners, nets = self.arrays
        begin = int(np.searchsorted(shoe_ids, shoe_ids[first if entries else max(0, first - self.lookback)]))
        sliced = shoe_ids[begin:], winners[begin:], {kind: net[begin:] for kind, net in nets.items()}
        result = {"entries": {}, "exits": {}, "starts": {}}
        for system in self.systems:
            sessions, result["entries"][system.name], result["exits"][system.name] = play_range(
                system, sliced, self.keys[begin:], first - begin, last - begin, (entries or {}).get(system.name))
            result["starts"][system.name] = (sessions["start"] + begin).tolist()
        return result

    def play_again(self, asked: dict) -> list[dict]:
        self.replayed.append(sorted(asked))
        return [self.play(index, entries) for index, (_, entries) in asked.items()]

    def settled_starts(self) -> dict[str, list[int]]:
        """Every system's session starts over the run, from the ranges' settled results."""
        results = settle([self.play(index) for index in range(len(self.ranges))], self.play_again)
        return {system.name: [start for result in results for start in result["starts"][system.name]]
                for system in self.systems}


def short_sessions(name: str, **session):
    """A shipped system with a small goal and round limit: sessions end early often, so chains meet."""
    return load_system(name).with_session(**({"bankroll": "100", "goal": "30", "max_rounds": 40} | session))


def test_settled_ranges_hold_the_true_sessions_and_guesses_from_a_lookback_mostly_hold():
    systems = [short_sessions(name) for name in ("flat_banker", "martingale_player_32", "big_road_column")]
    systems.append(short_sessions("flat_player", ties_count=False))
    arrays = hand_made(6_000, seed=7)
    tasks = Tasks(systems, arrays, 1_500, lookback=1_500)
    assert tasks.settled_starts() == {system.name: true_starts(system, *arrays) for system in systems}
    assert sum(len(asked) for asked in tasks.replayed) < len(tasks.ranges) - 1


def test_chains_that_never_meet_are_played_again_one_range_per_stage():
    """Every session runs to its round limit: a guessed chain never meets the true one, so every
    range is wrong at first; all are played again once, then only the first still wrong, each time."""
    never = load_system("flat_banker").with_session(bankroll="100000", goal="100000", max_rounds=30)
    arrays = hand_made(2_000, seed=3)
    tasks = Tasks([never], arrays, 250, lookback=101)  # 30-round sessions: chains never meet
    assert tasks.settled_starts() == {never.name: true_starts(never, *arrays)}
    assert tasks.replayed == [list(range(1, 8)), *([index] for index in range(2, 8))]


def test_the_backtest_mirrored_the_results_settle_holds_since_play_again_was_not_handed_them():
    """pipeline/backtest/job.py kept its own copy of each range's latest result to know which systems'
    rows to keep; settle hands play_again each range's result as it stands: the first one, then the
    one the range's last replay returned."""
    never = load_system("flat_banker").with_session(bankroll="100000", goal="100000", max_rounds=30)
    tasks = Tasks([never], hand_made(2_000, seed=3), 250, lookback=101)
    current = dict(enumerate(tasks.play(index) for index in range(len(tasks.ranges))))
    stages = []

    def play_again(asked: dict) -> list[dict]:
        assert all(result is current[index] for index, (result, _) in asked.items())
        done = tasks.play_again(asked)
        current.update(zip(asked, done))
        stages.append(sorted(asked))
        return done

    settle(list(current.values()), play_again)
    assert stages == [list(range(1, 8)), *([index] for index in range(2, 8))]


def test_ranges_shorter_than_a_session_take_their_entry_from_the_session_spanning_them():
    systems = [short_sessions("flat_banker", max_rounds=90), short_sessions("paroli_player", max_rounds=60)]
    arrays = hand_made(1_500, seed=5)
    tasks = Tasks(systems, arrays, 13, lookback=20)
    starts = tasks.settled_starts()
    assert starts == {system.name: true_starts(system, *arrays) for system in systems}
    assert any(not any(first <= start < last for start in starts["flat_banker"]) for first, last in tasks.ranges)
    assert tasks.replayed


def test_a_range_is_wrong_where_its_entry_is_not_the_exit_before_it():
    results = [{"entries": {"a": 0}, "exits": {"a": 40}}, {"entries": {"a": 40}, "exits": {"a": 90}},
               {"entries": {"a": 85}, "exits": {"a": 130}}, {"entries": {"a": 130}, "exits": {"a": 170}}]
    assert wrong_ranges(results) == [2]


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
