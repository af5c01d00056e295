"""The information model: what a player at the table has not seen before each round.

A player sees the face-up burn card and every card of every round dealt; the cards burned face down
after it are never shown. So the unseen cards before round r of a shoe are the full shoe minus the
burn card and the cards of rounds 1 .. r-1: the face-down burned cards stay among them. This needs the
rounds and shoes tables only, no replay of the shuffle.

The dealer's view (the cards actually left in the shoe) also takes out the face-down burned cards,
which only a replay of the shoe's shuffle from its rng_seed knows; `dealer_view` gives it.
"""

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.cards import CARDS_PER_DECK
from pipeline.simulate.kernel import NO_CARD, shuffled_shoe

CARD_COLUMNS = ("player_card1", "player_card2", "player_card3", "banker_card1", "banker_card2", "banker_card3")
ROUND_COLUMNS = ("shoe_id", "round", *CARD_COLUMNS)
SHOE_COLUMNS = ("shoe_id", "rng_seed", "burn_card", "cards_burned")


def _codes(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """Card codes as int16, NO_CARD where the column is null (a card not dealt)."""
    return pc.fill_null(column, NO_CARD).to_numpy().astype(np.int16)


def _tally(rows: np.ndarray, codes: np.ndarray, n: int) -> np.ndarray:
    """An (n, 52) count of each card code at each row, from parallel arrays of rows and codes."""
    counts = np.zeros((n, CARDS_PER_DECK), dtype=np.int32)
    dealt = codes != NO_CARD
    np.add.at(counts, (rows[dealt], codes[dealt]), 1)
    return counts


def unseen_compositions(rounds: pa.Table, shoes: pa.Table, decks: int, dealer_view: bool = False) -> pa.Table:
    """Before every round of `rounds` (any order; every shoe in `shoes`): the unseen cards.

    Returns a table sorted by shoe_id and round with shoe_id, round, unseen_cards, and `composition`,
    a fixed-size list of 52 int16: the unseen count of each card code (pipeline.cards order). With
    `dealer_view`, the face-down burned cards are taken out too (a replay of each shoe's shuffle).
    """
    rounds = rounds.select(list(ROUND_COLUMNS)).sort_by([("shoe_id", "ascending"), ("round", "ascending")])
    shoes = shoes.select(list(SHOE_COLUMNS)).sort_by("shoe_id")
    shoe_id = rounds["shoe_id"].to_numpy()
    n = len(shoe_id)
    rows = np.arange(n)
    dealt = sum(_tally(rows, _codes(rounds[column]), n) for column in CARD_COLUMNS)
    seen_before = np.cumsum(dealt, axis=0) - dealt  # every earlier round of the batch ...
    starts = np.flatnonzero(np.r_[True, shoe_id[1:] != shoe_id[:-1]]) if n else np.zeros(0, dtype=np.int64)
    seen_before -= np.repeat(seen_before[starts], np.diff(np.r_[starts, n]), axis=0)  # ... of the same shoe
    shoe_row = np.searchsorted(shoes["shoe_id"].to_numpy(), shoe_id)
    shown = _tally(np.arange(shoes.num_rows), _codes(shoes["burn_card"]), shoes.num_rows)
    if dealer_view:
        shown += burned_face_down(shoes, decks)
    composition = (decks - seen_before - shown[shoe_row]).astype(np.int16)
    return pa.table({
        "shoe_id": rounds["shoe_id"], "round": rounds["round"],
        "unseen_cards": pa.array(composition.sum(axis=1, dtype=np.int16)),
        "composition": pa.FixedSizeListArray.from_arrays(pa.array(composition.ravel()), CARDS_PER_DECK),
    })


def burned_face_down(shoes: pa.Table, decks: int) -> np.ndarray:
    """(shoes, 52): the cards each shoe burned face down after its turned card, replayed from its
    rng_seed (the turned card is the shoe's first, the burned ones follow it)."""
    burned = np.zeros((shoes.num_rows, CARDS_PER_DECK), dtype=np.int32)
    seeds = shoes["rng_seed"].to_pylist()
    for row, (seed, count) in enumerate(zip(seeds, shoes["cards_burned"].to_numpy())):
        np.add.at(burned[row], shuffled_shoe(np.uint64(int(seed)), decks)[1:1 + count], 1)
    return burned


def compositions_array(unseen: pa.Table) -> np.ndarray:
    """The (rounds, 52) int array of an unseen_compositions table's composition column."""
    return unseen["composition"].combine_chunks().flatten().to_numpy().reshape(-1, CARDS_PER_DECK)
