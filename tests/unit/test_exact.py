"""The exact calculator: published figures, and brute force over every deal of small shoes."""

from collections import Counter
from fractions import Fraction
from itertools import permutations
from math import perm

import pytest

from pipeline.bets import NO_PAIR, PAIR, PAIR_STATES, RESULT_STATES, SUITED_PAIR, net_table, pair_index
from pipeline.cards import CARDS_PER_DECK, code_counts, rank, value
from pipeline.exact import exact_odds, pair_combinations, result_combinations
from pipeline.rule_sets import load_rule_set
from reference import reference_round


@pytest.fixture(scope="module")
def punto_banco_8():
    return exact_odds(load_rule_set("punto_banco"))


def test_eight_deck_totals_match_published_tables(punto_banco_8):
    # Published 8-deck combination counts (ordered deals of six cards).
    assert punto_banco_8.total_combinations == 4_998_398_275_503_360
    assert punto_banco_8.outcomes == {
        "banker": 2_292_252_566_437_888,
        "player": 2_230_518_282_592_256,
        "tie": 475_627_426_473_216,
    }


def test_eight_deck_house_edges_to_the_last_printed_digit(punto_banco_8):
    edges = {kind: round(float(bet.house_edge_pct), 2) for kind, bet in punto_banco_8.bets.items()}
    assert (edges["banker"], edges["player"], edges["tie"]) == (1.06, 1.24, 14.36)
    shares = {name: round(float(punto_banco_8.probability(name)) * 100, 2) for name in punto_banco_8.outcomes}
    assert shares == {"banker": 45.86, "player": 44.62, "tie": 9.52}


def deals(codes_held):
    cards = [code for code, held in enumerate(codes_held) for _ in range(held)]
    return permutations(cards, 6)


def brute_force(codes_held):
    results, pairs = Counter(), Counter()
    for deal in deals(codes_held):
        results[reference_round(*(int(value(c)) for c in deal))] += 1
        pairs[tuple(SUITED_PAIR if a == b else PAIR if rank(a) == rank(b) else NO_PAIR
                    for a, b in ((deal[0], deal[2]), (deal[1], deal[3])))] += 1
    return results, pairs


# Small shoes of 9 cards (60,480 ordered deals each): repeated codes, faces, every draw path.
SMALL_SHOES = {
    "mixed": {0: 2, 1: 1, 20: 1, 36: 1, 40: 1, 44: 1, 13: 1, 25: 1},
    "faces_and_naturals": {36: 2, 37: 1, 48: 2, 28: 2, 32: 1, 5: 1},
    "low_cards": {0: 3, 4: 2, 8: 2, 12: 1, 16: 1},
}


@pytest.mark.parametrize("shoe", SMALL_SHOES)
def test_counts_equal_brute_force_over_every_deal(shoe):
    rule_set = load_rule_set("ez_baccarat")
    codes = [SMALL_SHOES[shoe].get(code, 0) for code in range(CARDS_PER_DECK)]
    results, pairs = brute_force(codes)
    value_held = [0] * 10
    for code, held in enumerate(codes):
        value_held[int(value(code))] += held
    assert dict(zip(RESULT_STATES, result_combinations(value_held, rule_set.draw))) == {
        state: results.get(state, 0) for state in RESULT_STATES
    }
    assert [pair_combinations(codes)[pair_index(*state)] for state in PAIR_STATES] == [
        pairs.get(state, 0) for state in PAIR_STATES
    ]


def test_bet_moments_equal_brute_force_settlement():
    rule_set = load_rule_set("ez_baccarat")
    codes = [SMALL_SHOES["mixed"].get(code, 0) for code in range(CARDS_PER_DECK)]
    results, _ = brute_force(codes)
    total = sum(results.values())
    odds = exact_odds(rule_set, codes)
    for kind in ("player", "banker", "tie", "dragon_7", "panda_8"):
        nets = dict(zip(RESULT_STATES, net_table(kind, rule_set.bets[kind])))
        mean = sum(Fraction(nets[s]) * n for s, n in results.items()) / total
        square = sum(Fraction(nets[s]) ** 2 * n for s, n in results.items()) / total
        assert odds.bets[kind].ev == mean
        assert odds.bets[kind].variance == square - mean**2


def test_player_pair_probability_has_its_closed_form():
    # P(pair) = sum over ranks of c(c-1) / (N(N-1)); 8 decks: 13 * 32 * 31 / (416 * 415).
    odds = exact_odds(load_rule_set("punto_banco"))
    p = Fraction(13 * 32 * 31, 416 * 415)
    assert odds.bets["player_pair"].ev == 12 * p - 1


@pytest.mark.parametrize("decks", [1, 6, 8])
@pytest.mark.parametrize("name", ["punto_banco", "super_six", "europe", "ez_baccarat"])
def test_every_shipped_rule_set_counts_every_deal_once(name, decks):
    odds = exact_odds(load_rule_set(name, decks))
    assert sum(odds.outcomes.values()) == odds.total_combinations
    assert odds.total_combinations == perm(decks * 52, 6)


def test_remaining_shoe_composition_changes_the_odds():
    rule_set = load_rule_set("punto_banco")
    full = code_counts(8)
    no_small = [held - 6 * (rank(code) in (1, 2, 3)) for code, held in enumerate(full)]
    richer = exact_odds(rule_set, no_small)
    assert richer.total_combinations == perm(sum(no_small), 6)
    assert richer.bets["player"].ev != exact_odds(rule_set).bets["player"].ev

