"""Where each range's first session begins, exact, found in parallel by speculation with verification.

Sessions are consecutive in run order and each is a function of its start alone. A first stage plays
every range from a guess, its own first round, and keeps the chain of starts it followed and its exit
(the chain's first start at or after the range's end). The driver then walks the ranges in order: the
first range's entry is its first round; a range's true entry is the true exit of the range before it.
When that entry is on the range's guessed chain, the chain from there on is the true one, and the
range's exit is the chain's. When it is not, the range is played again from its true entry, in a
small stage over every range so missed (one per system at most), until none is. A start is a round's
key (Rounds.keys): its shoe and its number in the shoe. See docs/betting-systems.md.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from pipeline.errors import BaccaratError
from pipeline.systems import System


@dataclass(frozen=True)
class Chain:
    """A chain of sessions over one range: the keys of the starts it followed in the range, in order,
    and its exit."""

    starts: np.ndarray  # int64 keys
    exit: int

    def holds(self, start: int) -> bool:
        at = int(np.searchsorted(self.starts, start))
        return at < len(self.starts) and int(self.starts[at]) == start


# chains(first shoes of ranges, {first shoe: {system name: entry key, or None for its first round}})
PlayChains = Callable[[Mapping[int, Mapping[str, int | None]]], dict[int, dict[str, Chain]]]


def check_bounded(system: System) -> None:
    """Refuse, in one line, a system whose sessions have no bound on their rounds: a session that
    spans shoes without a round limit could need every round to the run's end to be played."""
    if system.session.span_shoes and system.session.max_rounds is None:
        raise BaccaratError(f"system {system.name!r}: a backtest needs max_rounds (or --max-rounds) for a system "
                            "whose sessions span shoes, so that a task reads a bounded number of rounds past its range")


def follow(chains: list[Chain], range_ends: list[int], entries: list[int], entry: int) -> int | None:
    """Extend `entries` (the true entries of the first ranges, `entry` the next one's) along the
    guessed chains while they hold the true entry; the first range whose chain misses it, or None once
    every range has its entry. range_ends: the key of each range's end (its next range's first shoe)."""
    for index in range(len(entries), len(chains)):
        entries.append(entry)
        if entry >= range_ends[index]:  # a session from before the range spans all of it
            continue
        if not chains[index].holds(entry):
            return index
        entry = chains[index].exit
    return None


def exact_entries(play_chains: PlayChains, names: list[str], firsts: list[int],
                  range_ends: list[int]) -> dict[int, dict[str, int]]:
    """Each range's true entry for each system: {first shoe: {system name: key}}. play_chains plays
    ranges from the entries asked, in parallel; it is called once for the guesses, then once per round
    of replays of the ranges the walk found missed."""
    chains = play_chains({first: dict.fromkeys(names) for first in firsts})
    by_system = {name: [chains[first][name] for first in firsts] for name in names}
    entries = {name: [] for name in names}
    missed = {name: follow(by_system[name], range_ends, entries[name], by_system[name][0].starts[0])
              for name in names}
    while pending := {name: index for name, index in missed.items() if index is not None}:
        asked: dict[int, dict[str, int]] = {}
        for name, index in pending.items():
            asked.setdefault(firsts[index], {})[name] = entries[name].pop()
        replayed = play_chains(asked)
        for name, index in pending.items():
            by_system[name][index] = replayed[firsts[index]][name]
            missed[name] = follow(by_system[name], range_ends, entries[name], int(by_system[name][index].starts[0]))
    return {first: {name: int(entries[name][index]) for name in names} for index, first in enumerate(firsts)}
