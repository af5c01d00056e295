"""Baccarat banque from a finite shoe: every deal counted exactly, once for every profile.

A compiled loop walks the two-card hands of hand 1, hand 2 and the Banker as unordered pairs of
values (55 each), then every action at every decision (each hand's stand or draw where its table
allows it, the Banker's both), with the cards each leaves (without replacement, or with it for
the infinite deck). It counts ordered nine-card deals, cards a round does not use included, so
every round weighs the same, by where each passes: each hand's two-card total and column, the
Banker's total and action, and whether the hand loses or wins. A deal ending on naturals is
counted apart: no one decides there.

The counts reach 416**9 for 8 decks (past int64), so the loop keeps them modulo primes below 2**31,
as many as make a product above the shoe's number of deals (which bounds every count: three for
8 decks), and the Chinese remainder theorem gives them back as exact integers. A profile's value
is then a contraction with its probabilities.
"""

from dataclasses import dataclass
from fractions import Fraction
from math import lcm, perm, prod

import numpy as np
from numba import njit

from pipeline.cards import VALUES, code_counts, value_counts
from pipeline.errors import BaccaratError
from pipeline.games.banque import (
    COLUMNS,
    DEFAULT_POLICY,
    HAND_LOSES,
    HAND_WINS,
    HANDS,
    NATURAL_PAID,
    BanquePolicy,
    BanqueValue,
    CellGains,
    Profile,
    banque_value,
    check_banque,
    load_policy,
    player_strategies,
    profile_of,
    value_document,
)
from pipeline.games.strategies import Strategy
from pipeline.games.value import DRAW, INFINITE, INFINITE_DECK, STAND, shoe_of
from pipeline.rule_sets import RuleSet
from pipeline.rules import NATURAL_MIN, PLAYER_STOOD, DrawRules

DEAL = 9
PRIMES = (2147483647, 2147483629, 2147483587, 2147483579, 2147483563, 2147483549, 2147483543, 2147483497)
HAND_STATES = VALUES * COLUMNS  # a hand's two-card total and its column


@njit(cache=True)
def _count(held, step, allowed, unused, primes, tally, ended):
    """Fill tally[prime, hand, state 1, state 2, Banker total, action, loses|wins] and ended[prime, hand,
    loses|wins] (zeros), each modulo its prime; a state is total * COLUMNS + column. It returns nothing:
    numba boxes a returned array by calling Python, where a Ctrl-C pending since the loop began is raised,
    and the call then crashed (a segfault, exit 139, or a SystemError)."""
    n = held.copy()
    cards = np.empty(6, dtype=np.int64)
    ways = np.empty(len(primes), dtype=np.int64)
    for a1 in range(VALUES):
        for b1 in range(a1, VALUES):
            for a2 in range(VALUES):
                for b2 in range(a2, VALUES):
                    for a3 in range(VALUES):
                        for b3 in range(a3, VALUES):
                            cards[0], cards[1], cards[2], cards[3], cards[4], cards[5] = a1, b1, a2, b2, a3, b3
                            orders = (1 + (a1 != b1)) * (1 + (a2 != b2)) * (1 + (a3 != b3))
                            for q in range(len(primes)):
                                ways[q] = orders
                            dealt = True
                            for v in cards:
                                dealt &= n[v] > 0
                                for q in range(len(primes)):
                                    ways[q] = ways[q] * n[v] % primes[q]
                                n[v] -= step
                            if dealt:
                                _round(n, step, ways, (a1 + b1) % 10, (a2 + b2) % 10, (a3 + b3) % 10,
                                       allowed, unused, primes, tally, ended)
                            for v in cards:
                                n[v] += step


@njit(inline="always")
def _hand_outcome(paid, final, banker):
    """1 wins, 0 loses, -1 ties: a natural paid at once wins."""
    if paid or final > banker:
        return 1
    return 0 if final < banker else -1


@njit(cache=True)
def _round(n, step, ways, t1, t2, bt, allowed, unused, primes, tally, ended):
    natural1, natural2 = t1 >= NATURAL_MIN, t2 >= NATURAL_MIN
    if bt >= NATURAL_MIN or (natural1 and natural2):
        for q in range(len(primes)):
            weight = ways[q] * unused[q, 6] % primes[q]
            for h, t in ((0, t1), (1, t2)):
                outcome = _hand_outcome(t >= NATURAL_MIN and bt < NATURAL_MIN, t, bt)
                if outcome >= 0:
                    ended[q, h, outcome] = (ended[q, h, outcome] + weight) % primes[q]
        return
    for act1 in range(2):
        if not _may(natural1, t1, act1, allowed):
            continue
        for v1 in range(0 if act1 else -1, VALUES if act1 else 0):
            k1, c1, f1 = _shows(n, natural1, t1, v1)
            if k1 == 0:
                continue
            if v1 >= 0:
                n[v1] -= step
            for act2 in range(2):
                if not _may(natural2, t2, act2, allowed):
                    continue
                for v2 in range(0 if act2 else -1, VALUES if act2 else 0):
                    k2, c2, f2 = _shows(n, natural2, t2, v2)
                    if k2 == 0:
                        continue
                    if v2 >= 0:
                        n[v2] -= step
                    used = 6 + (v1 >= 0) + (v2 >= 0)
                    _banker(n, ways, k1 * k2, used, t1 * COLUMNS + c1, t2 * COLUMNS + c2, bt,
                            (natural1, natural2), (f1, f2), unused, primes, tally)
                    if v2 >= 0:
                        n[v2] += step
            if v1 >= 0:
                n[v1] += step


@njit(inline="always")
def _may(natural, total, action, allowed):
    """Whether a hand may take the action: a natural stands (it was paid), others as their table allows."""
    return action == STAND if natural else allowed[total, action]


@njit(inline="always")
def _shows(n, natural, total, third):
    """A hand's third card (-1: none) as the cards it can be (1 for none), its column and its final total."""
    if third < 0:
        return 1, NATURAL_PAID if natural else PLAYER_STOOD, total
    return n[third], third, (total + third) % 10


@njit(inline="always")
def _banker(n, ways, thirds, used, s1, s2, bt, paid, finals, unused, primes, tally):
    """Both Banker actions: stand on bt, or draw; the draw's cards tallied per hand and outcome."""
    lose1 = win1 = lose2 = win2 = 0  # the cards of the Banker's draw that make each hand lose or win
    for v in range(VALUES):
        banker = (bt + v) % 10
        outcome = _hand_outcome(paid[0], finals[0], banker)
        lose1 += n[v] * (outcome == 0)
        win1 += n[v] * (outcome == 1)
        outcome = _hand_outcome(paid[1], finals[1], banker)
        lose2 += n[v] * (outcome == 0)
        win2 += n[v] * (outcome == 1)
    drawn = ((lose1, win1), (lose2, win2))
    for q in range(len(primes)):
        p = primes[q]
        weight = ways[q] * (thirds % p) % p
        stand = weight * unused[q, used] % p
        draw = weight * unused[q, used + 1] % p
        for h in range(2):
            outcome = _hand_outcome(paid[h], finals[h], bt)
            if outcome >= 0:
                tally[q, h, s1, s2, bt, STAND, outcome] = (tally[q, h, s1, s2, bt, STAND, outcome] + stand) % p
            for outcome in range(2):
                tally[q, h, s1, s2, bt, DRAW, outcome] = (tally[q, h, s1, s2, bt, DRAW, outcome]
                                                          + draw * drawn[h][outcome]) % p


@dataclass(frozen=True)
class ShoeCounts:
    """Exact counts of ordered nine-card deals (see the module's docstring), as Python ints."""

    total: int
    tally: np.ndarray  # object[HANDS, HAND_STATES, HAND_STATES, VALUES, 2 actions, loses|wins]
    ended: np.ndarray  # object[HANDS, loses|wins]


def count_shoe(draw: DrawRules, shoe: int | str | list[int]) -> ShoeCounts:
    """Every deal of `shoe` decks, the INFINITE deck, or a composition (cards per value 0..9)."""
    if shoe == INFINITE:
        held, step = INFINITE_DECK, 0
    else:
        held, step = (value_counts(code_counts(shoe)) if isinstance(shoe, int) else list(shoe)), 1
    size = sum(held)
    if len(held) != VALUES or min(held) < 0 or (step and size < DEAL) or size == 0:
        raise BaccaratError("a banque shoe needs 10 non-negative counts per value and at least nine cards")
    left = [size ** (DEAL - used) if step == 0 else perm(size - used, DEAL - used) for used in range(DEAL + 1)]
    primes = _primes_above(left[0])
    unused = np.array([[count % p for count in left] for p in primes], dtype=np.int64)
    allowed = np.stack([~draw.player_draws | draw.player_options, draw.player_draws | draw.player_options], axis=1)
    tally = np.zeros((len(primes), 2, HAND_STATES, HAND_STATES, VALUES, 2, 2), dtype=np.int64)
    ended = np.zeros((len(primes), 2, 2), dtype=np.int64)
    _count(np.array(held, dtype=np.int64), step, allowed, unused, np.array(primes, dtype=np.int64), tally, ended)
    return ShoeCounts(left[0], _exact(tally, primes), _exact(ended, primes))


def _primes_above(bound: int) -> list[int]:
    """The fewest of PRIMES whose product exceeds `bound`."""
    for count in range(1, len(PRIMES) + 1):
        if prod(PRIMES[:count]) > bound:
            return list(PRIMES[:count])
    raise BaccaratError(f"a shoe of {round(bound ** (1 / DEAL)):,} cards is too large to count exactly")


def _exact(residues: np.ndarray, primes: list[int]) -> np.ndarray:
    """The integers, below the primes' product, with these residues (Chinese remainder theorem)."""
    modulus = prod(primes)
    basis = [(modulus // p) * pow(modulus // p, -1, p) for p in primes]
    total = sum(residues[q].astype(object) * basis[q] for q in range(len(primes)))
    return total % modulus


def _numerators(probabilities: np.ndarray) -> tuple[np.ndarray, int]:
    flat = [Fraction(p) for p in probabilities.ravel()]
    denominator = lcm(*(p.denominator for p in flat))
    numerators = [p.numerator * (denominator // p.denominator) for p in flat]
    return np.array(numerators, dtype=object).reshape(probabilities.shape), denominator


def _hand_weights(player_draw: np.ndarray) -> tuple[np.ndarray, int]:
    """[state]: the chance a hand takes the action its column shows, over a common denominator."""
    draws, denominator = _numerators(player_draw)
    weights = np.zeros((VALUES, COLUMNS), dtype=object)
    weights[:, :PLAYER_STOOD] = draws[:, None]
    weights[:, PLAYER_STOOD] = denominator - draws
    weights[:, NATURAL_PAID] = denominator
    return weights.reshape(HAND_STATES), denominator


def weighted_tally(counts: ShoeCounts, profile: Profile) -> tuple[np.ndarray, int]:
    """[hand, Banker total, column 1, column 2, action, loses|wins]: the counts weighed by both hands'
    chances of their actions, over the returned denominator."""
    (first, d1), (second, d2) = (_hand_weights(profile.player_draw[h]) for h in range(HANDS))
    shape = (HANDS, VALUES, COLUMNS, VALUES, COLUMNS, VALUES, 2, 2)
    by_state = counts.tally * first[None, :, None, None, None, None] * second[None, None, :, None, None, None]
    return by_state.reshape(shape).sum(axis=(1, 3)).transpose(0, 3, 1, 2, 4, 5), d1 * d2


def shoe_value(counts: ShoeCounts, profile: Profile) -> BanqueValue:
    """The exact value of a profile from the counted shoe."""
    weighted, denominator = weighted_tally(counts, profile)
    draws, banker_denominator = _numerators(profile.banker_draw)
    action = np.stack([banker_denominator - draws, draws], axis=-1)  # [t, c1, c2, action]
    over = counts.total * denominator * banker_denominator
    results = {HAND_LOSES: [], HAND_WINS: []}
    for outcome, chances_of in results.items():
        for h in range(HANDS):
            played = (weighted[h, ..., outcome] * action).sum()
            chances_of.append(Fraction(int(played) + int(counts.ended[h, outcome]) * denominator * banker_denominator,
                                       over))
    return BanqueValue(tuple(results[HAND_WINS]), tuple(results[HAND_LOSES]), profile.stakes, profile.commission)


def finite_gains(counts: ShoeCounts) -> CellGains:
    """The Banker's gains at each cell (a positive multiple of them) from the counted shoe."""
    def gains(profile: Profile) -> np.ndarray:
        weighted, _ = weighted_tally(counts, profile)
        per_hand = weighted[..., HAND_LOSES] * (1 - profile.commission) - weighted[..., HAND_WINS]
        return sum(stake * per_hand[h] for h, stake in enumerate(profile.stakes))
    return gains


def profile_for(rule_set: RuleSet, shoe: int | str, policy: BanquePolicy,
                strategies: tuple[Strategy, Strategy]) -> tuple[Profile, ShoeCounts | None]:
    """The profile a policy makes in `shoe` (decks, or INFINITE), and the shoe's counts when finite."""
    if shoe == INFINITE:
        return profile_of(rule_set, policy, strategies), None
    counts = count_shoe(rule_set.draw, shoe)
    return profile_of(rule_set, policy, strategies, finite_gains(counts)), counts


def rule_set_value(rule_set: RuleSet, decks: int | str | None, policy_name: str | None,
                   strategy_names: str | None) -> dict:
    """`baccarat odds --rules banque`: the exact value of a profile, as banque.value_document."""
    rule_set, shoe = shoe_of(check_banque(rule_set), decks)
    policy = load_policy(policy_name or DEFAULT_POLICY)
    strategies = player_strategies(rule_set, strategy_names)
    profile, counts = profile_for(rule_set, shoe, policy, strategies)
    value = banque_value(profile) if counts is None else shoe_value(counts, profile)
    return value_document(rule_set, shoe, policy, strategies, value)
