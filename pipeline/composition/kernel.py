"""The compiled kernel: exact EVs of every bet of a rule set, from the unseen cards.

It counts what pipeline.exact counts (ordered six-card deals, so that every round
weighs the same) for many compositions at once, with the same settlement: the
drawing rules and the net of every bet in every state arrive as lookup tables
built from conf/ by pipeline.rules and pipeline.bets. Every count is an int64;
each EV is one division at the end.

The algebra that makes it fast (all of it exact; tests/unit/test_composition_kernel.py checks it
against pipeline.exact):
- the third-card stage hoisted out of the enumeration of the four-card starts: with A, B[v]
  and C[v, u] the sums, over the starts of a pair of two-card totals, of their weight W and of
  W m[v] and W m[v] m[u] (m: how many of the four cards are of value class v), the starts
  followed by third cards x, y weigh sum W (c[x] - m[x]) (c[y] - m[y] - [x = y])
  = c[x] c[y] A - c[x] B[y] - c[y] B[x] + C[x, y] - [x = y] (c[x] A - B[x]),
  so the third cards are dealt once per pair of totals, not once per start;
- the Player's two cards as an unordered pair of classes (55 instead of 100), counted twice
  when they differ;
- the Banker's two cards in closed form: for a Player pair leaving counts c', the ordered
  Banker pairs of total t weigh g(x, t - x) = c'[x] (c'[t - x] - [x = t - x]), summed over x,
  and their own moments are sums of the same g, so the starts are 55 x 10 sums, not 10^4;
- the two hands exchanged: the starts of totals (pt, bt) and (bt, pt) are the same cards in
  the other hands, so A, B and C are taken for pt <= bt only.
Pair bets need suits (a suited pair is the same code twice): their nine states
come from the 52 code counts in closed form.
"""

from dataclasses import dataclass

import numpy as np
from numba import njit

from pipeline.bets import (
    BET_KINDS,
    CENTS,
    NO_PAIR,
    PAIR,
    PAIR_STATES,
    PAIRS_BASIS,
    RESULT_BASIS,
    RESULT_STATES,
    SUITED_PAIR,
    net_cents_table,
    pair_index,
    states_of,
)
from pipeline.cards import ALL_CODES, CARDS_PER_DECK, CODE_VALUES, MAX_DECKS, RANKS, VALUES, rank
from pipeline.errors import BaccaratError
from pipeline.exact import DEAL
from pipeline.rule_sets import RuleSet
from pipeline.rules import NATURAL_MIN, PLAYER_STOOD, result_index

_HAND_SIZES = (2, 3)
_RESULTS, _PAIRS = len(RESULT_STATES), len(PAIR_STATES)
_CODE_VALUE = CODE_VALUES.astype(np.int64)
_CODE_RANK = (rank(ALL_CODES) - 1).astype(np.int64)
MOST_CARDS = MAX_DECKS * CARDS_PER_DECK  # 416: every count of ordered deals, and 100 times it, below 2**53
_CENTS = float(CENTS)
_HALF_BITS = 26
_HALF, _LOW_HALF = float(1 << _HALF_BITS), (1 << _HALF_BITS) - 1
_MOD10 = np.arange(2 * VALUES) % VALUES  # of a sum of two totals
_MINUS = (np.arange(VALUES)[:, None] - np.arange(VALUES)[None, :]) % VALUES  # [t, x]: t - x


@dataclass(frozen=True)
class EvTables:
    """Everything the kernel needs from a rule set, as arrays, built once per rule set."""

    bets: tuple[str, ...]
    player_draws: np.ndarray  # bool[10], a writable copy (the kernel is compiled for writable arrays)
    banker_draws: np.ndarray  # bool[10, 11]
    result_slot: np.ndarray  # int64[2, 2, 10, 10]: RESULT_STATES index of (player cards, banker cards, totals)
    pair_slot: np.ndarray  # int64[3, 3]: PAIR_STATES index of (player pair state, banker pair state)
    net_basis: np.ndarray  # int8[bets]
    net_class: np.ndarray  # int64[bets, 400]: which of the bet's distinct nets each state pays
    net_cents: np.ndarray  # int64[bets, classes]: the distinct nets, in cents

    @classmethod
    def of(cls, rule_set: RuleSet) -> "EvTables":
        bets = tuple(rule_set.bets)
        net_class = np.zeros((len(bets), _RESULTS), dtype=np.int64)
        classes = []
        for row, (kind, terms) in enumerate(rule_set.bets.items()):
            distinct, net_class[row, : len(states_of(kind))] = np.unique(net_cents_table(kind, terms),
                                                                          return_inverse=True)
            classes.append(distinct)
        net_cents = np.zeros((len(bets), max(map(len, classes))), dtype=np.int64)
        for row, cents in enumerate(classes):
            net_cents[row, : len(cents)] = cents
        cards = np.array(_HAND_SIZES)
        totals = np.arange(VALUES)
        result_slot = result_index(totals[None, None, :, None], totals[None, None, None, :],
                                   cards[:, None, None, None], cards[None, :, None, None])
        states = np.array([NO_PAIR, PAIR, SUITED_PAIR])
        pair_slot = pair_index(states[:, None], states[None, :])
        basis = [RESULT_BASIS if BET_KINDS[kind].basis == "result" else PAIRS_BASIS for kind in bets]
        return cls(bets, np.array(rule_set.draw.player_draws), np.array(rule_set.draw.banker_draws),
                   np.ascontiguousarray(result_slot, dtype=np.int64), pair_slot.astype(np.int64),
                   np.array(basis, dtype=np.int8), net_class, net_cents)

    def kernel_arguments(self) -> tuple:
        """composition_evs' arguments after the compositions."""
        return (self.player_draws, self.banker_draws, self.result_slot, self.pair_slot,
                self.net_basis, self.net_class, self.net_cents)


_TABLES: dict[str, EvTables] = {}
NEEDS_A_FIXED_TABLEAU = "the exact odds before each round need the table to decide every draw"


def tables_for(rule_set: RuleSet) -> EvTables:
    """EvTables.of, once per distinct rule set in this process."""
    key = rule_set.model_dump_json()
    if key not in _TABLES:
        rule_set.check_fixed_tableau(NEEDS_A_FIXED_TABLEAU)
        _TABLES[key] = EvTables.of(rule_set)
    return _TABLES[key]


def round_evs(rule_set: RuleSet, compositions: np.ndarray) -> np.ndarray:
    """float64[n, bets]: the exact EV per unit staked of every bet of `rule_set` (in its order),
    for each row of `compositions`, int[n, 52] counts of the unseen cards by card code."""
    compositions = np.ascontiguousarray(compositions, dtype=np.int64)
    if compositions.ndim != 2 or compositions.shape[1] != CARDS_PER_DECK:
        raise BaccaratError(f"compositions must have shape (n, {CARDS_PER_DECK}), got {compositions.shape}")
    cards = compositions.sum(axis=1)
    if compositions.size and (compositions.min() < 0 or cards.min() < DEAL or cards.max() > MOST_CARDS):
        raise BaccaratError(f"every composition needs non-negative counts and {DEAL} to {MOST_CARDS} cards")
    return composition_evs(compositions, *tables_for(rule_set).kernel_arguments())


@njit(cache=True)
def composition_evs(compositions, player_draws, banker_draws, result_slot, pair_slot,
                    net_basis, net_class, net_cents):
    """The kernel behind round_evs: one composition after another, on one core."""
    n = compositions.shape[0]
    evs = np.empty((n, net_basis.shape[0]))
    result_counts = np.empty(_RESULTS, dtype=np.int64)
    pair_counts = np.empty(_PAIRS, dtype=np.int64)
    class_counts = np.empty(net_cents.shape[1], dtype=np.int64)
    values = np.empty(VALUES, dtype=np.int64)
    for i in range(n):
        codes = compositions[i]
        values[:] = 0
        for code in range(CARDS_PER_DECK):
            values[_CODE_VALUE[code]] += codes[code]
        _result_counts(values, player_draws, banker_draws, result_slot, result_counts)
        _pair_counts(codes, pair_slot, pair_counts)
        total = np.float64(result_counts.sum())  # times 100 still exact: 720 divides it
        for bet in range(net_basis.shape[0]):
            counts = result_counts if net_basis[bet] == RESULT_BASIS else pair_counts
            class_counts[:] = 0
            for state in range(counts.shape[0]):
                class_counts[net_class[bet, state]] += counts[state]
            evs[i, bet] = _net_cents(class_counts, net_cents[bet]) / (total * _CENTS)
    return evs


@njit(cache=True)
def _net_cents(class_counts, cents):
    """sum cents * counts, summed exactly as integers (in two halves, which int64 holds)
    and rounded once: the wins and losses nearly cancel, so their rounding errors would not."""
    high = 0
    low = 0
    for k in range(class_counts.shape[0]):
        high += cents[k] * (class_counts[k] >> _HALF_BITS)
        low += cents[k] * (class_counts[k] & _LOW_HALF)
    return np.float64(high) * _HALF + np.float64(low)


@njit(cache=True)
def _result_counts(c, player_draws, banker_draws, result_slot, out):
    """Ordered six-card deals ending in each of RESULT_STATES, from the counts c per value class."""
    cards = c.sum()
    someone_draws, player_draws_first = _draw_stages(player_draws, banker_draws)
    # The starts of totals (pt, bt) and (bt, pt) are the same cards dealt to the other hand: only
    # the sums with pt <= bt are taken, for both cells.
    moments_needed = someone_draws | someone_draws.T
    cross_needed = player_draws_first | player_draws_first.T
    # Sums over the four-card starts of each pair of totals [pt, bt] of their weight W (A), of W
    # times the Banker's and the Player's class multiplicities m_B and m_P (B = B_B + B_P), and,
    # where both may draw, cross[pt, bt, y, x] = sum W m_P[y] (2 m_B[x] + m_P[x]).
    weight = np.zeros((VALUES, VALUES), dtype=np.int64)
    banker_moment = np.zeros((VALUES, VALUES, VALUES), dtype=np.int64)
    player_moment = np.zeros((VALUES, VALUES, VALUES), dtype=np.int64)
    cross = np.zeros((VALUES, VALUES, VALUES, VALUES), dtype=np.int64)
    rest = c.copy()
    banker_pairs = np.empty(VALUES, dtype=np.int64)  # [x]: g(x, bt - x)
    for a in range(VALUES):
        if c[a] == 0:
            continue
        rest[a] -= 1
        for b in range(a, VALUES):
            if rest[b] == 0:
                continue
            player_weight = c[a] * rest[b] * (1 if a == b else 2)
            rest[b] -= 1
            pt = _MOD10[a + b]
            for bt in range(pt, VALUES):
                banker_ways = 0
                for x in range(VALUES):
                    z = _MINUS[bt, x]
                    banker_pairs[x] = rest[x] * (rest[z] - (x == z))
                    banker_ways += banker_pairs[x]
                start_weight = player_weight * banker_ways
                weight[pt, bt] += start_weight
                if start_weight == 0 or not moments_needed[pt, bt]:
                    continue
                player_moment[pt, bt, a] += start_weight
                player_moment[pt, bt, b] += start_weight
                banker_row = banker_moment[pt, bt]
                if not cross_needed[pt, bt]:
                    for x in range(VALUES):
                        banker_row[x] += 2 * player_weight * banker_pairs[x]
                    continue
                cross_a, cross_b = cross[pt, bt, a], cross[pt, bt, b]
                for x in range(VALUES):
                    share = 2 * player_weight * banker_pairs[x]  # sum over the Banker pairs of W m_B[x]
                    banker_row[x] += share
                    cross_a[x] += 2 * share
                    cross_b[x] += 2 * share
                cross_a[a] += start_weight
                cross_a[b] += start_weight
                cross_b[a] += start_weight
                cross_b[b] += start_weight
            rest[b] += 1
        rest[a] += 1
    _second_moments(cross, banker_moment, cross_needed)
    _third_cards(c, weight, banker_moment + player_moment, cross, player_draws, banker_draws, someone_draws,
                 cards - 5, (cards - 4) * (cards - 5), result_slot, out)


@njit(cache=True)
def _second_moments(cross, banker_moment, cross_needed):
    """Turn cross[pt, bt] into C[x, y] = sum W m[x] m[y] = (cross[y, x] + cross[x, y]) / 2 plus
    the Banker pair's own part, B_B[x] at y = x and at y = bt - x, in place."""
    for pt in range(VALUES):
        for bt in range(pt, VALUES):
            if not cross_needed[pt, bt]:
                continue
            moments = cross[pt, bt]
            for x in range(VALUES):
                for y in range(x + 1, VALUES):
                    moments[x, y] = moments[y, x] = (moments[x, y] + moments[y, x]) >> 1
            for x in range(VALUES):
                moments[x, x] += banker_moment[pt, bt, x]
                moments[x, _MINUS[bt, x]] += banker_moment[pt, bt, x]


@njit(cache=True)
def _draw_stages(player_draws, banker_draws):
    """bool[pt, bt] tables: a third card is dealt; the Player draws first (the Banker may follow)."""
    someone_draws = np.zeros((VALUES, VALUES), dtype=np.bool_)
    player_draws_first = np.zeros((VALUES, VALUES), dtype=np.bool_)
    for pt in range(NATURAL_MIN):
        for bt in range(NATURAL_MIN):
            player_draws_first[pt, bt] = player_draws[pt]
            someone_draws[pt, bt] = player_draws[pt] or banker_draws[bt, PLAYER_STOOD]
    return someone_draws, player_draws_first


@njit(cache=True)
def _third_cards(c, weight, moment, second_moment, player_draws, banker_draws, someone_draws,
                 one_unused, two_unused, result_slot, out):
    """From the per-totals sums A, B and C to the counts of every final state. The sums of cell
    (pt, bt) serve (bt, pt) too: they count the same four cards, whichever hand holds them."""
    final = np.zeros((2, 2, VALUES, VALUES), dtype=np.int64)  # [player drew, banker drew, pt, bt]
    # both hands draw: [bt, player final total, banker third card], the banker's final total
    # being (bt + third card) % 10, so that every row is added as one contiguous vector
    both_draw = np.zeros((VALUES, VALUES, VALUES), dtype=np.int64)
    for pt in range(VALUES):
        for bt in range(VALUES):
            low, high = min(pt, bt), max(pt, bt)  # the cell whose sums were taken
            starts = weight[low, high]
            if starts == 0:
                continue
            moments = moment[low, high]
            third = c * starts - moments  # [x]: sum W (c[x] - m[x]), the starts a third card x follows
            if not someone_draws[pt, bt]:
                final[0, 0, pt, bt] += starts * two_unused
            elif not player_draws[pt]:
                for y in range(VALUES):
                    final[0, 1, pt, _MOD10[bt + y]] += third[y] * one_unused
            else:
                for x in range(VALUES):
                    if banker_draws[bt, x]:
                        row = both_draw[bt, _MOD10[pt + x]]
                        second = second_moment[low, high, x]
                        for y in range(VALUES):
                            row[y] += c[x] * third[y] - moments[x] * c[y] + second[y]
                        row[x] -= third[x]
                    else:
                        final[1, 0, _MOD10[pt + x], bt] += third[x] * one_unused
    for bt in range(VALUES):
        for pt in range(VALUES):
            for y in range(VALUES):
                final[1, 1, pt, _MOD10[bt + y]] += both_draw[bt, pt, y]
    for drew_p in range(2):
        for drew_b in range(2):
            for pt in range(VALUES):
                for bt in range(VALUES):
                    out[result_slot[drew_p, drew_b, pt, bt]] = final[drew_p, drew_b, pt, bt]


@njit(cache=True)
def _pair_counts(codes, pair_slot, out):
    """Ordered six-card deals in each of PAIR_STATES, from the counts per card code.

    With k[x] cards of code x and r[q] of rank q: S = sum k(k-1) ordered pairs of one code,
    Q = sum r(r-1) of one rank; two of them taken by one hand leave the other S - (4k - 6)
    or Q - (4r - 6). The joint law of the two hands is symmetric in Player and Banker.
    """
    by_rank = np.zeros(RANKS, dtype=np.int64)
    for code in range(CARDS_PER_DECK):
        by_rank[_CODE_RANK[code]] += codes[code]
    cards = by_rank.sum()
    same_code = 0
    for code in range(CARDS_PER_DECK):
        same_code += codes[code] * (codes[code] - 1)
    same_rank = 0
    for r in range(RANKS):
        same_rank += by_rank[r] * (by_rank[r] - 1)
    code_code = 0  # both hands a pair of one code
    code_rank = 0  # Player a pair of one code, Banker of one rank (the same, swapped)
    for code in range(CARDS_PER_DECK):
        k = codes[code]
        code_code += k * (k - 1) * (same_code - 4 * k + 6)
        code_rank += k * (k - 1) * (same_rank - 4 * by_rank[_CODE_RANK[code]] + 6)
    rank_rank = 0
    for r in range(RANKS):
        rank_rank += by_rank[r] * (by_rank[r] - 1) * (same_rank - 4 * by_rank[r] + 6)
    others = (cards - 2) * (cards - 3)
    code_any = same_code * others
    rank_any = same_rank * others
    starts = cards * (cards - 1) * others
    joint = np.empty((3, 3), dtype=np.int64)
    joint[SUITED_PAIR, SUITED_PAIR] = code_code
    joint[SUITED_PAIR, PAIR] = joint[PAIR, SUITED_PAIR] = code_rank - code_code
    joint[SUITED_PAIR, NO_PAIR] = joint[NO_PAIR, SUITED_PAIR] = code_any - code_rank
    joint[PAIR, PAIR] = rank_rank - 2 * code_rank + code_code
    joint[PAIR, NO_PAIR] = joint[NO_PAIR, PAIR] = rank_any - code_any - rank_rank + code_rank
    joint[NO_PAIR, NO_PAIR] = starts - 2 * rank_any + rank_rank
    unused = (cards - 4) * (cards - 5)
    for player in range(3):
        for banker in range(3):
            out[pair_slot[player, banker]] = joint[player, banker] * unused
