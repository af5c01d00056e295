"""A committed run's rounds as the arrays play_sessions reads: shoe ids, round numbers, winners coded
0 Banker, 1 Player, 2 tie, and each bet kind's net of one unit in hundredths (exact: the rounds table's
decimal(9,2) times 100)."""

from dataclasses import dataclass
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.play import WINNER_CODES
from pipeline.runs import RunRecord, shoe_rows
from pipeline.storage import Store

_HUNDRED = pa.scalar(Decimal(100), pa.decimal128(3, 0))
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

    def then(self, later: "Rounds") -> "Rounds":
        """These rounds followed by `later`."""
        return Rounds(np.concatenate([self.shoe_ids, later.shoe_ids]), np.concatenate([self.numbers, later.numbers]),
                      np.concatenate([self.winners, later.winners]),
                      {kind: np.concatenate([net, later.nets[kind]]) for kind, net in self.nets.items()})

    def keys(self) -> np.ndarray:
        """Each round's key, the same in every task and increasing in run order: its shoe and number."""
        return (self.shoe_ids << _ROUND_BITS) | self.numbers


def read_rounds(store: Store, run: RunRecord, kinds: tuple[str, ...], first: int, last: int) -> Rounds:
    """The rounds of shoes [first, last) of a committed run, in run order, with the nets of `kinds`."""
    if first >= last:
        return Rounds(np.empty(0, np.int64), np.empty(0, np.int16), np.empty(0, np.int8),
                      {kind: np.empty(0, np.int64) for kind in kinds})
    rows = shoe_rows(store, run, "rounds", ["shoe_id", "round", "outcome", *(f"net_{kind}" for kind in kinds)],
                     first, last).sort_by([("shoe_id", "ascending"), ("round", "ascending")])
    winners = pc.index_in(rows["outcome"], value_set=pa.array(list(WINNER_CODES)))
    return Rounds(rows["shoe_id"].to_numpy(), rows["round"].to_numpy(), winners.to_numpy().astype(np.int8),
                  {kind: pc.multiply(rows[f"net_{kind}"], _HUNDRED).cast(pa.int64()).to_numpy() for kind in kinds})
