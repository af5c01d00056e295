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
from numba import njit

from pipeline.cards import CARDS_PER_DECK, NO_CARD
from pipeline.simulate.kernel import shuffled_shoe

CARD_COLUMNS = ("player_card1", "player_card2", "player_card3", "banker_card1", "banker_card2", "banker_card3")
ROUND_COLUMNS = ("shoe_id", "round", *CARD_COLUMNS)
SHOE_COLUMNS = ("shoe_id", "rng_seed", "burn_card", "cards_burned")


def _codes(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """Card codes as int16, NO_CARD where the column is null (a card not dealt)."""
    return pc.fill_null(column, NO_CARD).to_numpy().astype(np.int16)


@njit(cache=True)
def _walk_shoes(shoe_id, shoe_row, cards, unseen_at_start, compositions):
    """Walk rounds sorted by shoe and round: each row gets the composition before its cards are dealt."""
    current = np.empty(unseen_at_start.shape[1], dtype=np.int16)
    for i in range(len(shoe_id)):
        if i == 0 or shoe_id[i] != shoe_id[i - 1]:
            current[:] = unseen_at_start[shoe_row[i]]
        compositions[i] = current
        for k in range(cards.shape[0]):
            if cards[k, i] != NO_CARD:
                current[cards[k, i]] -= 1


def unseen_compositions(rounds: pa.Table, shoes: pa.Table, decks: int, dealer_view: bool = False) -> pa.Table:
    """Before every round of `rounds` (any order; every shoe in `shoes`): the unseen cards.

    Returns a table sorted by shoe_id and round with shoe_id, round, unseen_cards, and `composition`,
    a fixed-size list of 52 int16: the unseen count of each card code (pipeline.cards order). With
    `dealer_view`, the face-down burned cards are taken out too (a replay of each shoe's shuffle).
    """
    rounds = rounds.select(list(ROUND_COLUMNS)).sort_by([("shoe_id", "ascending"), ("round", "ascending")])
    shoes = shoes.select(list(SHOE_COLUMNS)).sort_by("shoe_id")
    shoe_id, shoe_ids = rounds["shoe_id"].to_numpy(), shoes["shoe_id"].to_numpy()
    shoe_row = np.minimum(np.searchsorted(shoe_ids, shoe_id), max(len(shoe_ids) - 1, 0))
    if len(shoe_id) and (not len(shoe_ids) or (shoe_ids[shoe_row] != shoe_id).any()):
        raise ValueError("rounds of a shoe that the shoes table lacks")
    unseen_at_start = np.full((shoes.num_rows, CARDS_PER_DECK), decks, dtype=np.int16)
    burn_card = _codes(shoes["burn_card"])
    shown = burn_card != NO_CARD
    unseen_at_start[np.flatnonzero(shown), burn_card[shown]] -= 1
    if dealer_view:
        unseen_at_start -= burned_face_down(shoes, decks)
    compositions = np.empty((len(shoe_id), CARDS_PER_DECK), dtype=np.int16)
    cards = np.stack([_codes(rounds[column]) for column in CARD_COLUMNS])
    _walk_shoes(shoe_id, shoe_row, cards, unseen_at_start, compositions)
    return pa.table({
        "shoe_id": rounds["shoe_id"], "round": rounds["round"],
        "unseen_cards": pa.array(compositions.sum(axis=1, dtype=np.int16)),
        "composition": pa.FixedSizeListArray.from_arrays(pa.array(compositions.ravel()), CARDS_PER_DECK),
    })


def burned_face_down(shoes: pa.Table, decks: int) -> np.ndarray:
    """(shoes, 52): the cards each shoe burned face down after its turned card, replayed from its
    rng_seed (the turned card is the shoe's first, the burned ones follow it)."""
    burned = np.zeros((shoes.num_rows, CARDS_PER_DECK), dtype=np.int16)
    seeds = shoes["rng_seed"].to_pylist()
    for row, (seed, count) in enumerate(zip(seeds, shoes["cards_burned"].to_numpy())):
        np.add.at(burned[row], shuffled_shoe(np.uint64(int(seed)), decks)[1:1 + count], 1)
    return burned


def compositions_array(unseen: pa.Table) -> np.ndarray:
    """The (rounds, 52) int array of an unseen_compositions table's composition column."""
    return unseen["composition"].combine_chunks().flatten().to_numpy().reshape(-1, CARDS_PER_DECK)
