"""The exact value of a strategy pair, by composition counting.

Counts ordered six-card deals, as pipeline/exact.py does (cards a round does not use still
count, so every round weighs the same), by where each deal passes: the Player's two-card
total and his action (stand or draw), then the Banker's two card values, the column (the
Player's third card or PLAYER_STOOD) and the Banker's action, every action at every cell,
so that one count serves every strategy pair. A finite shoe deals without replacement; the
infinite deck deals with replacement, each of the 13 ranks with probability 1/13 (value 0
four times as likely as each other value), as Kemeny and Snell model it.

Counts are exact integers; a strategy pair's win probabilities and gains are Fractions.
"""

from dataclasses import dataclass
from fractions import Fraction
from math import lcm, perm

import numpy as np

from pipeline.cards import RANKS, VALUES, code_counts, value_counts
from pipeline.errors import BaccaratError
from pipeline.games.strategies import (
    BANKER,
    PLAYER,
    Strategy,
    banker_draw_probabilities,
    player_draw_probabilities,
)
from pipeline.rule_sets import RuleSet
from pipeline.rules import NATURAL_MIN, PLAYER_STOOD, DrawRules

INFINITE = "infinite"
DEAL = 6
STAND, DRAW = 0, 1
PLAYER_WINS, BANKER_WINS = 0, 1
COLUMNS = PLAYER_STOOD + 1
# cells[player total, player action, banker card a, banker card b, column, banker action, winner]
CELLS_SHAPE = (VALUES, 2, VALUES, VALUES, COLUMNS, 2, 2)
INFINITE_DECK = [RANKS - 9] + [1] * 9  # ranks per value: 10, J, Q, K are worth 0


@dataclass(frozen=True)
class DealCounts:
    """Ordered six-card deals, by winner, ending on a natural or passing through each cell.
    Only cells with a <= b are filled: the Banker's two cards in either order are one hand."""

    total: int
    natural: tuple[int, int]  # (Player wins, Banker wins) among naturals
    cells: np.ndarray  # object[CELLS_SHAPE] of ints


def count_deals(draw: DrawRules, shoe: int | str | list[int]) -> DealCounts:
    """Every deal counted, from a shoe of `shoe` decks, the INFINITE deck, or a composition
    (cards per value 0..9, dealt without replacement)."""
    if shoe == INFINITE:
        held, replacement = INFINITE_DECK, True
    else:
        held, replacement = (value_counts(code_counts(shoe)) if isinstance(shoe, int) else shoe), False
    if len(held) != VALUES or min(held) < 0 or (not replacement and sum(held) < DEAL):
        raise BaccaratError("a shoe needs 10 non-negative counts per value and at least six cards")
    counter = _Counter(list(held), replacement, draw)
    counter.count()
    return DealCounts(counter.ways_left(0), tuple(counter.natural), counter.array())


class _Counter:
    """The counting loops, over the multisets of the first four cards."""

    def __init__(self, held: list[int], replacement: bool, draw: DrawRules):
        self.held, self.step, self.size = held, 0 if replacement else 1, sum(held)
        self.player_actions = [
            [action for action, allowed in ((STAND, not draws or option), (DRAW, draws or option)) if allowed]
            for draws, option in zip(draw.player_draws.tolist(), draw.player_options.tolist())
        ]
        self.unused = [self.ways_left(used) for used in range(DEAL + 1)]
        self.natural = [0, 0]
        self.tally = [0] * int(np.prod(CELLS_SHAPE))

    def ways_left(self, used: int) -> int:
        """Orders of the cards a round with `used` cards leaves unused among the six."""
        return self.size ** (DEAL - used) if self.step == 0 else perm(self.size - used, DEAL - used)

    def take(self, value: int) -> int:
        ways = self.held[value]
        self.held[value] -= self.step
        return ways

    def give_back(self, *values: int) -> None:
        for value in values:
            self.held[value] += self.step

    def count(self) -> None:
        for p1 in range(VALUES):
            for p2 in range(p1, VALUES):
                for b1 in range(VALUES):
                    for b2 in range(b1, VALUES):
                        orders = (1 + (p1 != p2)) * (1 + (b1 != b2))
                        ways = orders * self.take(p1) * self.take(p2) * self.take(b1) * self.take(b2)
                        if ways:
                            self._hands((p1 + p2) % 10, b1, b2, ways)
                        self.give_back(p1, p2, b1, b2)

    def _hands(self, pt: int, b1: int, b2: int, ways: int) -> None:
        bt = (b1 + b2) % 10
        if pt >= NATURAL_MIN or bt >= NATURAL_MIN:
            self._settle(self.natural, 0, pt, bt, ways * self.unused[4])
            return
        for action in self.player_actions[pt]:
            base = ((((pt * 2 + action) * VALUES + b1) * VALUES + b2) * COLUMNS) * 4
            if action == STAND:
                self._banker(base + PLAYER_STOOD * 4, pt, bt, ways, 4)
                continue
            for p3 in range(VALUES):
                ways3 = ways * self.take(p3)
                if ways3:
                    self._banker(base + p3 * 4, (pt + p3) % 10, bt, ways3, 5)
                self.give_back(p3)

    def _banker(self, at: int, pt: int, bt: int, ways: int, used: int) -> None:
        """Both Banker actions at one cell: stand on bt, or draw a card."""
        self._settle(self.tally, at + STAND * 2, pt, bt, ways * self.unused[used])
        left = self.unused[used + 1]
        for b3 in range(VALUES):
            if self.held[b3]:
                self._settle(self.tally, at + DRAW * 2, pt, (bt + b3) % 10, ways * self.held[b3] * left)

    @staticmethod
    def _settle(tally: list[int], at: int, pt: int, bt: int, ways: int) -> None:
        if pt != bt:
            tally[at + (PLAYER_WINS if pt > bt else BANKER_WINS)] += ways

    def array(self) -> np.ndarray:
        return np.array(self.tally, dtype=object).reshape(CELLS_SHAPE)


@dataclass(frozen=True)
class Value:
    """The chances each side wins (a tie pushes), and each side's expected gain per unit staked:
    the house keeps `commission` of a Banker win, so the game is zero-sum only without one."""

    player_wins: Fraction
    banker_wins: Fraction
    commission: Fraction

    @property
    def player(self) -> Fraction:
        return self.player_wins - self.banker_wins

    @property
    def banker(self) -> Fraction:
        return (1 - self.commission) * self.banker_wins - self.player_wins


def _integers(probabilities: np.ndarray) -> tuple[np.ndarray, int]:
    """Probabilities as integer numerators over one common denominator."""
    flat = probabilities.ravel().tolist()  # Fractions or ints: both have numerator and denominator
    denominator = lcm(*{p.denominator for p in flat})
    numerators = [p.numerator * (denominator // p.denominator) for p in flat]
    return np.array(numerators, dtype=object).reshape(probabilities.shape), denominator


def _weights(probabilities: np.ndarray) -> tuple[np.ndarray, int]:
    """Per cell, the weights of stand and draw (last axis), over a common denominator."""
    draws, denominator = _integers(probabilities)
    return np.stack([denominator - draws, draws], axis=-1), denominator


@dataclass(frozen=True)
class AgainstPlayer:
    """Deal counts summed over one Player strategy: wins by Banker cell and action, over `scale`.
    Evaluating many Banker strategies against one Player strategy starts here."""

    counts: DealCounts
    by_cell: np.ndarray  # object[a, b, column, banker action, winner]
    scale: int  # the Player strategy's common denominator

    def value(self, banker_draw: np.ndarray, commission: Fraction = Fraction(0)) -> Value:
        weights, denominator = _weights(banker_draw)
        wins = np.tensordot(weights, self.by_cell, axes=4)
        natural = np.array(self.counts.natural, dtype=object) * self.scale * denominator
        over = self.counts.total * self.scale * denominator
        player, banker = (Fraction(int(n), over) for n in wins + natural)
        return Value(player, banker, Fraction(commission))


def against_player(counts: DealCounts, player_draw: np.ndarray) -> AgainstPlayer:
    weights, denominator = _weights(player_draw)
    return AgainstPlayer(counts, np.tensordot(weights, counts.cells, axes=2), denominator)


def strategy_value(counts: DealCounts, player_draw: np.ndarray, banker_draw: np.ndarray,
                   commission: Fraction = Fraction(0)) -> Value:
    """The exact value of the Player drawing with probability player_draw[total] and the Banker
    with probability banker_draw[a, b, column] (arrays from pipeline.games.strategies)."""
    return against_player(counts, player_draw).value(banker_draw, commission)


def shoe_of(rule_set: RuleSet, decks: int | str | None) -> tuple[RuleSet, int | str]:
    """The rule set with its decks overridden by an int, and the decks to count: its own, or INFINITE."""
    if decks == INFINITE:
        return rule_set, INFINITE
    rule_set = rule_set.with_decks(decks)
    return rule_set, rule_set.decks


def pair_value(rule_set: RuleSet, decks: int | str, player: Strategy, banker: Strategy) -> Value:
    """The exact value of a strategy pair in `rule_set`'s game, from a shoe of `decks` (or INFINITE)."""
    draw = rule_set.draw
    player.check_fits(rule_set, PLAYER)
    banker.check_fits(rule_set, BANKER)
    return strategy_value(count_deals(draw, decks), player_draw_probabilities(draw, player),
                          banker_draw_probabilities(draw, banker), rule_set.commission)


def pair_document(rules: str, decks: int | str, player: str, banker: str, value: Value) -> dict:
    """A strategy pair's value as JSON: exact fractions as "p/q" strings, floats beside them."""
    chances = {"player": value.player_wins, "banker": value.banker_wins,
               "tie": 1 - value.player_wins - value.banker_wins}
    gains = {"player": value.player, "banker": value.banker}
    return {
        "rules": rules, "decks": decks, "player_strategy": player, "banker_strategy": banker,
        "commission": str(value.commission), "commission_float": float(value.commission),
        "value": {side: str(gain) for side, gain in gains.items()},
        "value_float": {side: float(gain) for side, gain in gains.items()},
        "probabilities": {outcome: str(p) for outcome, p in chances.items()},
        "probabilities_float": {outcome: float(p) for outcome, p in chances.items()},
    }
