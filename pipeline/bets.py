"""Bet kinds and their settlement, in exact decimals.

Every bet is settled from one of two small state spaces, so that the exact
calculator and the simulator share one settlement table per bet:

- a round's *result*: both final totals and how many cards each hand holds
  (RESULT_STATES, 400 states), for bets on who wins and with what;
- the *pairs* in the first two cards of each hand (PAIR_STATES, 9 states):
  no pair, a pair of ranks, or a suited pair (the same card twice).
"""

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from itertools import product
from typing import Annotated

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from pipeline.rules import Result

NO_PAIR, PAIR, SUITED_PAIR = 0, 1, 2
LOSS = Decimal(-1)
PUSH = Decimal(0)
CENTS = Decimal(100)
RESULT_BASIS, PAIRS_BASIS = 0, 1  # a bet's basis as the kernels code it


def pair_index(player_pair_state, banker_pair_state):
    return player_pair_state * 3 + banker_pair_state


RESULT_STATES = tuple(Result(*state) for state in product(range(10), range(10), (2, 3), (2, 3)))
PAIR_STATES = tuple(product((NO_PAIR, PAIR, SUITED_PAIR), repeat=2))


Payout = Annotated[Decimal, Field(ge=0, le=10_000, decimal_places=2)]


class Terms(BaseModel):
    """What a table pays on one bet, net per unit staked (e.g. 0.95 for 5 % commission)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    pays: Payout
    pays_on_six: Payout | None = None  # Banker only: no-commission tables pay 0.5 on a winning 6
    push_on_three_card_seven: bool = False  # Banker only: EZ Baccarat


def _player(terms: Terms, r: Result) -> Decimal:
    return {"P": terms.pays, "B": LOSS, "T": PUSH}[r.winner]


def _banker(terms: Terms, r: Result) -> Decimal:
    if r.winner != "B":
        return LOSS if r.winner == "P" else PUSH
    if terms.push_on_three_card_seven and r.banker_total == 7 and r.banker_cards == 3:
        return PUSH  # EZ Baccarat: a Banker win with three cards totalling 7 pushes
    if terms.pays_on_six is not None and r.banker_total == 6:
        return terms.pays_on_six  # no-commission tables: half the stake on a winning 6
    return terms.pays


def _wins_if(condition: Callable[[Result], bool]) -> Callable[[Terms, Result], Decimal]:
    return lambda terms, r: terms.pays if condition(r) else LOSS


def _pairs_if(condition: Callable[[int, int], bool]) -> Callable[[Terms, tuple], Decimal]:
    return lambda terms, state: terms.pays if condition(*state) else LOSS


@dataclass(frozen=True)
class BetKind:
    basis: str  # "result" or "pairs": which state space settles it
    settle: Callable
    description: str


BET_KINDS: dict[str, BetKind] = {
    "player": BetKind("result", _player, "Player total higher; pushes on a tie"),
    "banker": BetKind("result", _banker, "Banker total higher; pushes on a tie"),
    "tie": BetKind("result", _wins_if(lambda r: r.winner == "T"), "equal totals"),
    "super_six": BetKind(
        "result", _wins_if(lambda r: r.winner == "B" and r.banker_total == 6),
        "Banker wins with a total of 6",
    ),
    "dragon_7": BetKind(
        "result",
        _wins_if(lambda r: r.winner == "B" and r.banker_total == 7 and r.banker_cards == 3),
        "Banker wins with a three-card 7",
    ),
    "panda_8": BetKind(
        "result",
        _wins_if(lambda r: r.winner == "P" and r.player_total == 8 and r.player_cards == 3),
        "Player wins with a three-card 8",
    ),
    "player_pair": BetKind("pairs", _pairs_if(lambda p, b: p != NO_PAIR), "Player's first two cards share a rank"),
    "banker_pair": BetKind("pairs", _pairs_if(lambda p, b: b != NO_PAIR), "Banker's first two cards share a rank"),
    "either_pair": BetKind(
        "pairs", _pairs_if(lambda p, b: p != NO_PAIR or b != NO_PAIR), "either hand's first two cards share a rank"
    ),
    "perfect_pair": BetKind(
        "pairs",
        _pairs_if(lambda p, b: SUITED_PAIR in (p, b)),
        "either hand's first two cards are the same rank and suit",
    ),
}


def states_of(kind: str) -> tuple:
    return RESULT_STATES if BET_KINDS[kind].basis == "result" else PAIR_STATES


def net_table(kind: str, terms: Terms) -> tuple[Decimal, ...]:
    """The net of one unit staked on `kind`, for every state of its basis, in state order."""
    settle = BET_KINDS[kind].settle
    return tuple(settle(terms, state) for state in states_of(kind))


def net_cents_table(kind: str, terms: Terms) -> np.ndarray:
    """net_table in integer cents, for array lookups in the simulator."""
    return np.array([int(net * CENTS) for net in net_table(kind, terms)], dtype=np.int64)
