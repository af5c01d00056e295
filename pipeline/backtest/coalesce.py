"""Where the sessions of a range of shoes begin, found exactly from the rounds before it alone.

Sessions are consecutive in run order and each is a function of its start alone, so the start that
follows a given start is known without anything before it. No session consumes more than H rounds
(session_bound), so the session holding the window's first round began at most H rounds before it
ended: the first true start inside a window is one of its first H + 1 rounds. A chain of sessions is
followed from each of them (coupling from the past); where every chain reaches the same first start at
or after the target, that start is the true one, whichever chain was the true chain. Otherwise the
window is too short, and a longer one is tried (down to the run's first round, whose start is known).
See docs/betting-systems.md.
"""

from collections.abc import Callable, Mapping

import numpy as np

from pipeline.errors import BaccaratError
from pipeline.systems import System

TIE = 2  # play_sessions' winner code of a tie
PlaySessions = Callable[..., dict[str, np.ndarray]]  # pipeline.play.play_sessions' signature


def check_bounded(system: System) -> None:
    """Refuse, in one line, a system whose sessions have no bound on their rounds: a session that
    spans shoes without a round limit could begin any number of shoes before a range."""
    if system.session.span_shoes and system.session.max_rounds is None:
        raise BaccaratError(f"system {system.name!r}: a backtest needs max_rounds (or --max-rounds) for a system "
                            "whose sessions span shoes, so that a session is found from the rounds before it")


def session_bound(system: System, winners: np.ndarray, start: int) -> int:
    """The most rounds a session from `start` can consume (H): max_rounds, or, when ties do not count,
    the rounds up to the max_rounds-th decided one (the arrays' remaining rounds when fewer are left)."""
    max_rounds = system.session.max_rounds
    if system.session.ties_count:
        return max_rounds
    decided = np.flatnonzero(winners[start:] != TIE)
    return int(decided[max_rounds - 1]) + 1 if len(decided) >= max_rounds else len(winners) - start


def first_start_at(play: PlaySessions, system: System, shoe_ids: np.ndarray, winners: np.ndarray,
                   nets: Mapping[str, np.ndarray], target: int, run_start: bool) -> int | None:
    """The first session start at or after index `target` of the arrays, whose first round is the
    first round of a shoe, or the run's first round when `run_start`. None when the chains from the
    window's first H + 1 rounds do not all agree: the window before `target` is too short.
    `play` is play_sessions (the reference or the kernel). The arrays hold at least the rounds a session
    from `target` may consume (session_bound), or every round up to the run's end."""
    if run_start:
        sessions = play(system, shoe_ids, winners, nets, 0, target)
        return int(sessions["start"][-1] + sessions["rounds"][-1]) if target else 0
    resolved: dict[int, int] = {}
    candidates = range(min(session_bound(system, winners, 0), len(winners) - 1) + 1)
    found = {_resolve(play, system, (shoe_ids, winners, nets), target, start, resolved) for start in candidates}
    return found.pop() if len(found) == 1 else None


def _resolve(play: PlaySessions, system: System, rounds: tuple, target: int, start: int,
             resolved: dict[int, int]) -> int:
    """The first start at or after `target` on the chain from `start`; `resolved` remembers it for every
    start the chain visited, so that a chain meeting one followed before stops there."""
    visited = []
    while start < target and start not in resolved:
        visited.append(start)
        start += int(play(system, *rounds, start, start + 1)["rounds"][0])
    answer = resolved.get(start, start)
    resolved.update(dict.fromkeys(visited, answer))
    return answer
