"""A committed run's rounds as the arrays play_sessions reads: shoe ids, round numbers, winners coded
0 Banker, 1 Player, 2 tie, and each bet kind's net of one unit in hundredths (exact: the rounds table's
decimal(9,2) times 100)."""

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.play import WINNER_CODES
from pipeline.runs import RunRecord, shoe_rows
from pipeline.storage import Store

_ROUND_BITS = 16  # a key's low bits: the round's number in its shoe


def shoe_key(shoe: int) -> int:
    """The key of shoe `shoe`'s start: below every round key of the shoe, above every one before it."""
    return shoe << _ROUND_BITS


@dataclass(frozen=True)
class Rounds:
    shoe_ids: np.ndarray  # int64
    numbers: np.ndarray  # int16, the round's number within its shoe
    winners: np.ndarray  # int8
    nets: dict[str, np.ndarray]  # bet kind -> int64 hundredths of a unit

    def __len__(self) -> int:
        return len(self.shoe_ids)

    def arguments(self, end: int | None = None) -> tuple:
        """play_sessions' shoe_ids, winners and nets, of the first `end` rounds (every round by default)."""
        return self.shoe_ids[:end], self.winners[:end], {kind: net[:end] for kind, net in self.nets.items()}

    def keys(self) -> np.ndarray:
        """Each round's key, the same in every task and increasing in run order: its shoe and number."""
        return _keys(self.shoe_ids, self.numbers)


def _keys(shoe_ids: np.ndarray, numbers: np.ndarray) -> np.ndarray:
    return (shoe_ids << _ROUND_BITS) | numbers


def read_rounds(store: Store, run: RunRecord, kinds: tuple[str, ...], first: int, last: int) -> Rounds:
    """The rounds of shoes [first, last) of a committed run, in run order, with the nets of `kinds`."""
    if first >= last:
        return Rounds(np.empty(0, np.int64), np.empty(0, np.int16), np.empty(0, np.int8),
                      {kind: np.empty(0, np.int64) for kind in kinds})
    rows = shoe_rows(store, run, "rounds", ["shoe_id", "round", "outcome", *(f"net_{kind}" for kind in kinds)],
                     first, last)
    keys = _keys(rows["shoe_id"].to_numpy(), rows["round"].to_numpy())
    if np.any(keys[1:] <= keys[:-1]):  # the files hold their rows in run order: a sort only if they do not
        rows = rows.take(np.argsort(keys, kind="stable"))
    winners = pc.index_in(rows["outcome"], value_set=pa.array(list(WINNER_CODES)))
    return Rounds(rows["shoe_id"].to_numpy(), rows["round"].to_numpy(), winners.to_numpy().astype(np.int8),
                  {kind: _hundredths(rows[f"net_{kind}"]) for kind in kinds})


def _hundredths(column: pa.ChunkedArray) -> np.ndarray:
    """A column of the contract's decimal(9,2) nets as their unscaled integers, the hundredths: a
    decimal128 holds each as two 64-bit words, low word first, and nine digits fit the low word."""
    array = column.combine_chunks()
    words = np.frombuffer(array.buffers()[1], dtype=np.int64, count=2 * (array.offset + len(array)))
    return words[2 * array.offset::2].copy()
