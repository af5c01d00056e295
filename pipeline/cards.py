"""Card codes and shoe compositions.

A card is a code 0..51: rank = code // 4 + 1 (1 = ace ... 13 = king),
suit = code % 4 (0 clubs, 1 diamonds, 2 hearts, 3 spades).
"""

import numpy as np

CARDS_PER_DECK = 52
RANKS = 13
SUITS = 4
VALUES = 10
MIN_DECKS, MAX_DECKS = 1, 8
NO_CARD = -1  # where a card was not dealt: a hand that stood on two, a shoe that burns none
# Count systems' bounds (pipeline/composition/counts.py): published tags are a few units; the bounds keep
# every count, and the marts' half-count levels of it (pipeline/marts/sql/prep_count_levels.sql), small.
MAX_TAG = 10
MAX_INITIAL_COUNT = MAX_TAG * MAX_DECKS * CARDS_PER_DECK
MAX_RUNNING_COUNT = MAX_INITIAL_COUNT + MAX_TAG * MAX_DECKS * CARDS_PER_DECK
MAX_TRUE_COUNT = MAX_RUNNING_COUNT * CARDS_PER_DECK  # per deck unseen, with one card unseen

ALL_CODES = np.arange(CARDS_PER_DECK, dtype=np.int8)


def rank(code):
    """1 = ace ... 13 = king; works on ints and numpy arrays."""
    return code // 4 + 1


def value(code):
    """Baccarat value: ace 1, two to nine face value, ten and pictures 0."""
    r = rank(code)
    return r * (r <= 9)


CODE_VALUES = value(ALL_CODES).astype(np.int8)


def code_counts(decks: int) -> list[int]:
    """How many of each of the 52 card codes a full shoe holds."""
    return [decks] * CARDS_PER_DECK


def value_counts(codes_held: list[int]) -> list[int]:
    """Collapse a per-code composition to counts per baccarat value 0..9."""
    counts = [0] * VALUES
    for code, held in enumerate(codes_held):
        counts[int(CODE_VALUES[code])] += held
    return counts


def decks_text(decks: int) -> str:
    """'1 deck', '8 decks'."""
    return "1 deck" if decks == 1 else f"{decks} decks"
