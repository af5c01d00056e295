"""Where each range's first session begins, exact, with the ranges played in parallel: speculation
with verification.

Sessions are consecutive in run order and each is a function of its start alone (and of the run's
rounds: a chooser's roads at the start are those of the shoe's earlier rounds). A task cannot know
where the session holding its range's first round began without every round before it, so it guesses:
it plays a look-back of rounds before its range from their first round, and keeps the sessions that
start in its range. Its chain of sessions meets the true chain as soon as one of its starts is a true
start (a session ending early, at its goal or ruin, moves a chain's starts; two chains that share a
start share every later one), which the look-back makes likely before the range. The task returns, per
system, its entry (its first start in the range) and its exit (its first start at or after the range's
end). The driver checks each range's entry against the exit of the range before it (the first range's
entry is the run's first round): where they differ, the range is played again from that exit, and the
checks run again, until none differs. See docs/betting-systems.md.
"""

from collections.abc import Callable, Mapping

import numpy as np

from pipeline.errors import BaccaratError
from pipeline.session_kernel import play_sessions
from pipeline.systems import System


def check_bounded(system: System) -> None:
    """Refuse, in one line, a system whose sessions have no bound on their rounds: a session that
    spans shoes without a round limit could need every round to the run's end to be played."""
    if system.session.span_shoes and system.session.max_rounds is None:
        raise BaccaratError(f"system {system.name!r}: a backtest needs max_rounds (or --max-rounds) for a system "
                            "whose sessions span shoes, so that a task reads a bounded number of rounds past its range")


def play_range(system: System, arrays: tuple, keys: np.ndarray, begin: int, end: int,
               known: int | None) -> tuple[dict[str, np.ndarray], int, int]:
    """The system's sessions that start in rounds [begin, end) of `arrays` (play_sessions' shoe_ids,
    winners and nets, from a shoe's first round, so that a session from any round sees its shoe's
    roads so far), and the keys of their entry and exit. They are played from the round of key
    `known` when given, else from the arrays' first round (a guess, unless it is the run's) for
    sessions that span shoes, else from `begin`, a shoe's first round. keys: each round's key, and
    one more, the run's end."""
    if known is not None:
        entry = int(np.searchsorted(keys, known))
    else:
        entry = 0 if system.session.span_shoes else begin
    played = play_sessions(system, *arrays, entry, end)
    starts = played["start"]
    if len(starts):
        exit_key = int(keys[starts[-1] + played["rounds"][-1]])
    else:  # a session from before the range consumed every round of it
        exit_key = known if known is not None else int(keys[entry])
    kept = starts >= begin
    sessions = {name: column[kept] for name, column in played.items()}
    entry_key = int(keys[sessions["start"][0]]) if kept.any() else exit_key
    return sessions, entry_key, exit_key


def wrong_ranges(results: list[Mapping]) -> list[int]:
    """The ranges (indices into `results`, each range's task result in run order, with the `entries`
    and `exits` of every system) whose entries are not the exits of the range before them."""
    return [index for index in range(1, len(results)) if results[index]["entries"] != results[index - 1]["exits"]]


def settle(results: list[dict],
           play_again: Callable[[dict[int, tuple[dict, dict[str, int]]]], list[dict]]) -> list[dict]:
    """The results, every range's entries verified. play_again({index: (result, entries)}) plays those
    ranges again, each from the entries given (`result` is the range's result as it stands), and
    returns their results in that order. The first wrong range
    is played from exits that are true, so it is right afterwards; the others wrong at the same time
    are played from the exits known then too, once, and only the first one after that: a system whose
    chains never meet costs one range per stage, not every later range each time."""
    results, again_before = list(results), set()
    while wrong := wrong_ranges(results):
        again = [index for index in wrong if index == wrong[0] or index not in again_before]
        again_before.update(again)
        replayed = play_again({index: (results[index], dict(results[index - 1]["exits"])) for index in again})
        for index, result in zip(again, replayed, strict=True):
            results[index] = result
    return results
