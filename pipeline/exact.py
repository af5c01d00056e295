"""Exact odds by composition counting.

Counts ordered deals of six cards from a shoe (as published tables do: cards a
round does not use still count, so every round weighs the same), over the ten
value classes for the drawing, and over the 52 card codes for the pair bets.
Every count is an exact integer; probabilities and moments are Fractions.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from math import perm, sqrt

from pipeline.bets import (
    BET_KINDS,
    NO_PAIR,
    PAIR,
    PAIR_STATES,
    RESULT_STATES,
    SUITED_PAIR,
    net_table,
    pair_index,
)
from pipeline.cards import CARDS_PER_DECK, RANKS, code_counts, rank, value_counts
from pipeline.errors import BaccaratError
from pipeline.rule_sets import RuleSet
from pipeline.rules import NATURAL_MIN, PLAYER_STOOD, DrawRules, result_index

DEAL = 6


def result_combinations(values: Sequence[int], draw: DrawRules) -> list[int]:
    """Ordered six-card deals ending in each of RESULT_STATES, from counts per value 0..9."""
    held = list(values)
    total = sum(held)
    unused = {used: perm(total - used, DEAL - used) for used in (4, 5, 6)}
    player_draws = draw.player_draws.tolist()
    banker_draws = draw.banker_draws.tolist()
    tally = [0] * len(RESULT_STATES)

    def take(v: int, ways: int) -> int:
        ways *= held[v]
        held[v] -= 1
        return ways

    # Each hand's two cards as a pair of values in either order: the orders deal alike, and as many ways.
    for p1 in range(10):
        w1 = take(p1, 1)
        for p2 in range(p1, 10):
            w2 = take(p2, w1)
            for b1 in range(10):
                w3 = take(b1, w2)
                for b2 in range(b1, 10):
                    w4 = take(b2, w3) * (1 + (p1 != p2)) * (1 + (b1 != b2))
                    if w4:
                        _third_cards((p1 + p2) % 10, (b1 + b2) % 10, w4, held, player_draws, banker_draws, unused,
                                     tally)
                    held[b2] += 1
                held[b1] += 1
            held[p2] += 1
        held[p1] += 1
    return tally


def _third_cards(pt, bt, ways, held, player_draws, banker_draws, unused, tally):
    if pt >= NATURAL_MIN or bt >= NATURAL_MIN or not (player_draws[pt] or banker_draws[bt][PLAYER_STOOD]):
        tally[result_index(pt, bt, 2, 2)] += ways * unused[4]
    elif not player_draws[pt]:
        for b3 in range(10):
            tally[result_index(pt, (bt + b3) % 10, 2, 3)] += ways * held[b3] * unused[5]
    else:
        for p3 in range(10):
            w5 = ways * held[p3]
            if not w5:
                continue
            held[p3] -= 1
            pt3 = (pt + p3) % 10
            if banker_draws[bt][p3]:
                for b3 in range(10):
                    tally[result_index(pt3, (bt + b3) % 10, 3, 3)] += w5 * held[b3]
            else:
                tally[result_index(pt3, bt, 3, 2)] += w5 * unused[5]
            held[p3] += 1


def pair_combinations(codes: Sequence[int]) -> list[int]:
    """Ordered six-card deals in each of PAIR_STATES, from counts per card code 0..51."""
    held = list(codes)
    total = sum(held)
    by_rank = [sum(held[code] for code in range(CARDS_PER_DECK) if rank(code) == r + 1) for r in range(RANKS)]
    same_card = sum(k * (k - 1) for k in held)
    same_rank = sum(k * (k - 1) for k in by_rank)
    unused = perm(total - 4, DEAL - 4)
    tally = [0] * len(PAIR_STATES)
    for x in range(CARDS_PER_DECK):
        for y in range(CARDS_PER_DECK):
            ways = held[x] * (held[y] - (x == y))
            if ways <= 0:
                continue
            player = SUITED_PAIR if x == y else PAIR if rank(x) == rank(y) else NO_PAIR
            # What the Banker's first two cards can be once x and y are gone.
            card, ranks, rest = same_card, same_rank, total - 2
            for code in (x, y):
                r = rank(code) - 1
                card -= 2 * (held[code] - 1)
                ranks -= 2 * (by_rank[r] - 1)
                held[code] -= 1
                by_rank[r] -= 1
            for banker, count in ((SUITED_PAIR, card), (PAIR, ranks - card), (NO_PAIR, rest * (rest - 1) - ranks)):
                tally[pair_index(player, banker)] += ways * count * unused
            for code in (x, y):
                held[code] += 1
                by_rank[rank(code) - 1] += 1
    return tally


@dataclass(frozen=True)
class BetOdds:
    ev: Fraction  # expected net per unit staked
    variance: Fraction

    @property
    def house_edge_pct(self) -> Fraction:
        return -100 * self.ev

    @property
    def sd(self) -> float:
        return sqrt(self.variance)


@dataclass(frozen=True)
class Odds:
    rules: str
    cards: int
    total_combinations: int
    outcomes: dict[str, int]  # "banker", "player", "tie" -> combinations
    bets: dict[str, BetOdds]

    def probability(self, outcome: str) -> Fraction:
        return Fraction(self.outcomes[outcome], self.total_combinations)

    def document(self, decks: int) -> dict:
        """The odds as `baccarat odds --json` prints them: exact counts, rounded probabilities and EVs."""
        return {
            "rules": self.rules,
            "decks": decks,
            "total_combinations": self.total_combinations,
            "outcomes": {
                name: {"combinations": ways, "probability": float(self.probability(name))}
                for name, ways in self.outcomes.items()
            },
            "bets": {
                kind: {"ev": float(bet.ev), "house_edge_pct": float(bet.house_edge_pct), "sd": bet.sd}
                for kind, bet in self.bets.items()
            },
        }

    def player_edges(self) -> dict[str, BetOdds]:
        """The bets whose payout gives the player the edge: allowed (a study may want one), never silently."""
        return {kind: bet for kind, bet in self.bets.items() if bet.ev > 0}


_OUTCOME_NAMES = {"B": "banker", "P": "player", "T": "tie"}


def _bet_odds(combinations: list[int], nets, total: int) -> BetOdds:
    nets = [Fraction(net) for net in nets]  # Decimal -> Fraction is exact
    mean = sum(ways * net for ways, net in zip(combinations, nets)) / total
    square = sum(ways * net * net for ways, net in zip(combinations, nets)) / total
    return BetOdds(ev=mean, variance=square - mean * mean)


def exact_odds(rule_set: RuleSet, codes: Sequence[int] | None = None) -> Odds:
    """The exact odds of the next round from a shoe holding `codes[c]` of each card code c.

    Without `codes`, the rule set's full shoe. Any remaining-shoe composition works,
    as long as it holds at least six cards.
    """
    rule_set.check_fixed_tableau("give a strategy for each side (`baccarat odds --player-strategy NAME "
                                 "--banker-strategy NAME`)")
    codes = list(code_counts(rule_set.decks) if codes is None else codes)
    if len(codes) != CARDS_PER_DECK or min(codes) < 0 or sum(codes) < DEAL:
        raise BaccaratError("a shoe composition needs 52 non-negative counts and at least six cards")
    by_state = {
        "result": result_combinations(value_counts(codes), rule_set.draw),
        "pairs": pair_combinations(codes),
    }
    total = perm(sum(codes), DEAL)
    assert sum(by_state["result"]) == total == sum(by_state["pairs"]), "every deal counted once"
    outcomes = dict.fromkeys(_OUTCOME_NAMES.values(), 0)
    for state, ways in zip(RESULT_STATES, by_state["result"]):
        outcomes[_OUTCOME_NAMES[state.winner]] += ways
    bets = {
        kind: _bet_odds(by_state[BET_KINDS[kind].basis], net_table(kind, terms), total)
        for kind, terms in rule_set.bets.items()
    }
    return Odds(rule_set.name, sum(codes), total, outcomes, bets)
