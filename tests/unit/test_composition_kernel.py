"""The composition kernel against the exact calculator (Fractions, which do not use the kernel)."""

import dataclasses
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pipeline.bets import BET_KINDS, net_table
from pipeline.cards import CARDS_PER_DECK, code_counts, value_counts
from pipeline.composition.kernel import composition_evs, round_evs, tables_for
from pipeline.errors import BaccaratError
from pipeline.exact import exact_odds, result_combinations
from pipeline.rule_sets import fixed_tableau_rule_sets, load_rule_set
from pipeline.rules import DrawRules

TOLERANCE = 1e-12
TENS = range(36, CARDS_PER_DECK)  # the codes of tens, jacks, queens and kings: value 0


def composition(counts: dict[int, int]) -> list[int]:
    return [counts.get(code, 0) for code in range(CARDS_PER_DECK)]


def value_rank(value: int) -> int:
    """The rank index (code // 4) of a card of baccarat value 0..9: a ten for 0."""
    return value - 1 if value else 9


def at_least_six(codes: list[int]) -> bool:
    return sum(codes) >= 6


tiny = st.lists(st.integers(0, CARDS_PER_DECK - 1), min_size=6, max_size=15).map(
    lambda cards: np.bincount(cards, minlength=CARDS_PER_DECK).tolist())
partial_shoe = st.integers(1, 8).flatmap(
    lambda decks: st.lists(st.integers(0, decks), min_size=CARDS_PER_DECK, max_size=CARDS_PER_DECK))
two_values = st.tuples(st.lists(st.integers(0, 9), min_size=2, max_size=2, unique=True),
                       st.lists(st.integers(0, 8), min_size=8, max_size=8)).map(
    lambda drawn: composition({value_rank(value) * 4 + suit: drawn[1][4 * i + suit]
                               for i, value in enumerate(drawn[0]) for suit in range(4)}))
one_code_missing = st.tuples(st.integers(1, 8), st.integers(0, CARDS_PER_DECK - 1)).map(
    lambda shoe: [0 if code == shoe[1] else shoe[0] for code in range(CARDS_PER_DECK)])
all_tens = st.lists(st.integers(0, 8), min_size=len(TENS), max_size=len(TENS)).map(
    lambda held: composition(dict(zip(TENS, held))))
compositions = st.one_of(tiny, partial_shoe, two_values, one_code_missing, all_tens).filter(at_least_six)


def exact_evs(rule_set, codes) -> list[float]:
    odds = exact_odds(rule_set, codes)
    return [float(odds.bets[kind].ev) for kind in rule_set.bets]


@pytest.mark.parametrize("name", fixed_tableau_rule_sets())
@settings(max_examples=12, deadline=None)
@given(codes=compositions)
@example(codes=composition({0: 1, 1: 1, 2: 1, 4: 1, 5: 1, 6: 1}))  # six cards: aces and twos
@example(codes=composition(dict.fromkeys(TENS, 2)))  # every hand a 0-0 tie
@example(codes=composition({17: 3, 20: 3, 21: 1}))  # fives and sixes, a suited pair possible
@example(codes=[0] + [8] * (CARDS_PER_DECK - 1))  # an 8-deck shoe without the ace of clubs
def test_evs_agree_with_the_exact_calculator(name, codes):
    rule_set = load_rule_set(name)
    kernel = round_evs(rule_set, np.array([codes]))[0]
    assert np.abs(kernel - exact_evs(rule_set, codes)).max() <= TOLERANCE


@pytest.mark.parametrize("name", fixed_tableau_rule_sets())
def test_full_shoes_give_the_float_of_the_exact_fraction(name):
    # The counts are exact integers and the net is summed exactly, then rounded once and divided
    # once: on every full shoe that gives the correctly rounded float of the Fraction, bit for bit.
    for decks in range(1, 9):
        rule_set = load_rule_set(name, decks)
        kernel = round_evs(rule_set, np.array([code_counts(decks)]))[0]
        assert kernel.tolist() == exact_evs(rule_set, None), f"{decks} decks"


def test_a_batch_is_its_rows_one_by_one():
    rule_set = load_rule_set("ez_baccarat")
    rows = np.array([code_counts(8), [2] * CARDS_PER_DECK, composition(dict.fromkeys(TENS, 1))])
    together = round_evs(rule_set, rows)
    assert together.shape == (3, len(rule_set.bets))
    assert np.array_equal(together, np.vstack([round_evs(rule_set, row[None]) for row in rows]))


draw_tables = st.tuples(st.lists(st.booleans(), min_size=10, max_size=10),
                        st.lists(st.booleans(), min_size=110, max_size=110))


@settings(max_examples=8, deadline=None)
@given(draw=draw_tables, codes=st.one_of(tiny, partial_shoe).filter(at_least_six))
def test_the_drawing_rules_are_data(draw, codes):
    """Any drawing table, not only punto banco's: the kernel reads it from its arguments."""
    player, banker = np.array(draw[0]), np.array(draw[1]).reshape(10, 11)
    rule_set = load_rule_set("ez_baccarat")
    tables = dataclasses.replace(tables_for(rule_set), player_draws=player, banker_draws=banker)
    kernel = composition_evs(np.array([codes], dtype=np.int64), *tables.kernel_arguments())[0]
    ways = result_combinations(value_counts(codes), DrawRules("random", player, banker, np.zeros(10, bool), np.zeros((10, 11), bool)))
    for column, kind in enumerate(rule_set.bets):
        if BET_KINDS[kind].basis == "pairs":
            continue  # no drawing rule changes the first two cards of each hand
        nets = net_table(kind, rule_set.bets[kind])
        exact = sum(Fraction(net) * n for net, n in zip(nets, ways, strict=True)) / sum(ways)
        assert abs(kernel[column] - float(exact)) <= TOLERANCE, kind


@pytest.mark.parametrize("rows", [np.zeros((1, 51), dtype=int), np.array([[1] * 5 + [0] * 47]),
                                  np.array([[-1] + [8] * 51]), np.array([[9] + [8] * 51])])
def test_bad_compositions_are_refused_in_one_line(rows):
    with pytest.raises(BaccaratError, match="^compositions must|^every composition needs") as error:
        round_evs(load_rule_set("punto_banco"), rows)
    assert "\n" not in str(error.value)
