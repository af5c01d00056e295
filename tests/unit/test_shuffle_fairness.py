"""Statistical fairness of the shuffle and the deal, tested the way gaming labs test shufflers and
RNGs (GLI-19; 25 CFR 547.14): chi-square tests of card-by-position uniformity, an exact test that
every permutation of a small deck is equally likely, a first-card test and a runs test on outcomes.

Every shoe is a pure function of (seed, shoe_id), so anyone with a run's seed can replay its cards.
That seeded reproducibility is what an analytics simulator needs and what a certified gaming RNG must
not have: this is an analytics simulator, not a certified gaming RNG. These tests check the
statistical properties a lab would check, nothing more.

Each test computes one statistic and compares it with its 99 % critical value. The seeds are fixed,
so the tests are deterministic: they do not flake, and a pass means these samples are consistent
with a fair shuffle at the 1 % level.
"""

import math
from itertools import permutations
from statistics import NormalDist

import numpy as np
import pytest

from pipeline.rule_sets import load_rule_set
from pipeline.schemas import OUTCOME_CODES
from pipeline.simulate.batch import Dealer
from pipeline.simulate.kernel import rng_seed, shuffle, shuffled_shoe

SEED = 547_14  # fixed: the tests are deterministic
ALPHA = 0.01  # 99 % confidence
DECKS = 8
CARDS = DECKS * 52
SHOES = 20_000  # 13 ranks x 416 positions: 1538 expected per cell
TINY_DECK, TINY_REPEATS = 4, 2_000  # 24 permutations x 2000: 2000 expected per permutation
RANKS, SUITS = 13, 4


def chi_square_critical(dof: int, alpha: float = ALPHA) -> float:
    """The upper-alpha critical value of chi-square with `dof` degrees of freedom.

    Wilson-Hilferty's cube-root normal approximation (1931), to keep scipy out of the dependencies.
    At alpha = 0.01 it is within 0.2 % of the tabulated value for 3 to 23 dof (26.246 against
    26.217 for 12, 41.662 against 41.638 for 23) and within 0.001 % for the pooled tests' thousands
    of dof. It errs slightly high, so a statistic right at the boundary passes.
    """
    z = NormalDist().inv_cdf(1 - alpha)
    h = 2 / (9 * dof)
    return dof * (1 - h + z * math.sqrt(h)) ** 3


def pearson(observed: np.ndarray, expected: np.ndarray | float, axis=None) -> np.ndarray | float:
    """Pearson's statistic: the sum of (observed - expected)^2 / expected."""
    return ((observed - expected) ** 2 / expected).sum(axis=axis)


def test_the_critical_values_match_the_tables():
    for dof, tabulated in [(3, 11.345), (12, 26.217), (23, 41.638), (100, 135.807), (1000, 1106.969)]:
        assert chi_square_critical(dof) == pytest.approx(tabulated, rel=2.5e-3)


@pytest.fixture(scope="module")
def shoes() -> np.ndarray:
    """SHOES shuffled 8-deck shoes, one row each, in dealing order."""
    return np.stack([shuffled_shoe(np.uint64(rng_seed(SEED, i)), DECKS) for i in range(SHOES)])


@pytest.mark.parametrize("kind, categories, of_code", [("rank", RANKS, lambda c: c // 4),
                                                       ("suit", SUITS, lambda c: c % 4)])
def test_every_rank_and_suit_is_equally_likely_at_every_position(shoes, kind, categories, of_code):
    """Count category x at position p over SHOES shoes; uniform means N / categories per cell.

    Pooled over positions, the statistic is not chi-square with 416 * (k - 1) dof: every shoe holds
    each rank (suit) exactly CARDS / k times, which fixes the table's other margin too. A table of
    n-card permutations with both margins fixed gives Pearson's statistic ~ n/(n-1) chi-square with
    (n - 1)(k - 1) dof, so the statistic is scaled by (n - 1)/n before the comparison. Each position
    alone is an honest k-cell multinomial across independent shoes, so the largest per-position
    statistic is checked too, at alpha / 416 (Bonferroni), to catch a bias confined to a few
    positions; Wilson-Hilferty is 1-5 % high that far in the tail, which only makes it lenient.
    """
    counts = np.zeros((CARDS, categories), dtype=np.int64)
    for position in range(CARDS):
        counts[position] = np.bincount(of_code(shoes[:, position]), minlength=categories)
    expected = SHOES / categories
    per_position = pearson(counts, expected, axis=1)
    pooled = per_position.sum() * (CARDS - 1) / CARDS
    pooled_critical = chi_square_critical((CARDS - 1) * (categories - 1))
    worst_critical = chi_square_critical(categories - 1, ALPHA / CARDS)
    print(f"{kind} by position: pooled {pooled:.1f} < {pooled_critical:.1f}; "
          f"worst position {per_position.max():.2f} < {worst_critical:.2f}")
    assert pooled < pooled_critical
    assert per_position.max() < worst_critical


def test_every_permutation_of_a_small_deck_is_equally_likely():
    """An exact test of the algorithm: 4 cards, 24 permutations, each 1/24 under Fisher-Yates."""
    index = {p: k for k, p in enumerate(permutations(range(TINY_DECK)))}
    counts = np.zeros(len(index), dtype=np.int64)
    for i in range(len(index) * TINY_REPEATS):
        cards = np.arange(TINY_DECK, dtype=np.int8)
        shuffle(cards, np.uint64(rng_seed(SEED, i)))
        counts[index[tuple(cards.tolist())]] += 1
    statistic = pearson(counts, TINY_REPEATS)
    critical = chi_square_critical(len(index) - 1)
    print(f"permutations of {TINY_DECK} cards: {statistic:.2f} < {critical:.2f}, fewest {counts.min()}")
    assert counts.min() > 0
    assert statistic < critical


@pytest.fixture(scope="module")
def dealt():
    """(shoe_id, outcome code, player's first card of the round, round number) of SHOES dealt shoes."""
    rounds, _ = Dealer.of(load_rule_set()).deal(SEED, 0, SHOES)
    assert load_rule_set().decks == DECKS
    outcome = rounds.column("outcome").combine_chunks()
    assert outcome.dictionary.to_pylist() == list(OUTCOME_CODES)
    return (rounds.column("shoe_id").to_numpy(), outcome.indices.to_numpy(),
            rounds.column("player_card1").to_numpy(), rounds.column("round").to_numpy())


def test_the_first_card_after_the_burn_is_equally_likely_any_rank(dealt):
    """Where the first dealt card sits depends on the burn card, yet its rank is still uniform."""
    _, _, first_card, round_no = dealt
    counts = np.bincount(first_card[round_no == 1] // 4, minlength=RANKS)
    assert counts.sum() == SHOES
    statistic = pearson(counts, SHOES / RANKS)
    critical = chi_square_critical(RANKS - 1)
    print(f"first card after the burn: {statistic:.2f} < {critical:.2f}")
    assert statistic < critical


def test_banker_and_player_wins_come_in_random_runs(dealt):
    """Wald-Wolfowitz runs test on each shoe's Banker/Player sequence, ties dropped.

    Runs do not cross shoes. Given a shoe's n1 Banker and n2 Player wins (n = n1 + n2), a random
    order has E[runs] = 1 + 2 n1 n2 / n and Var = 2 n1 n2 (2 n1 n2 - n) / (n^2 (n - 1)); the runs,
    expectations and variances are summed over shoes and z = (runs - E) / sqrt(Var), |z| < 2.576.
    Card removal makes consecutive rounds of a shoe very slightly dependent (a round's cards are not
    in the next), so the order is not exactly exchangeable, but that dependence is far below what
    this test can detect at this size.
    """
    shoe_id, outcome, _, _ = dealt
    decided = outcome != OUTCOME_CODES.index("T")
    shoe_id, banker = shoe_id[decided], outcome[decided] == OUTCOME_CODES.index("B")
    first = np.r_[True, shoe_id[1:] != shoe_id[:-1]]  # rows are in shoe order, rounds in order
    runs = first.sum() + (~first[1:] & (banker[1:] != banker[:-1])).sum()
    n1 = np.bincount(shoe_id, weights=banker, minlength=SHOES)
    n = np.bincount(shoe_id, minlength=SHOES).astype(float)
    n2 = n - n1
    used = n >= 2
    assert used.all()
    product = 2 * n1[used] * n2[used]
    expected = (1 + product / n[used]).sum()
    variance = (product * (product - n[used]) / (n[used] ** 2 * (n[used] - 1))).sum()
    z = (runs - expected) / math.sqrt(variance)
    critical = NormalDist().inv_cdf(1 - ALPHA / 2)
    print(f"runs: {runs} against {expected:.1f} +- {math.sqrt(variance):.1f}, |z| = {abs(z):.3f} < {critical:.3f}")
    assert abs(z) < critical
