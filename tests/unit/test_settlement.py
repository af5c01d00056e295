"""Every bet kind of every rule set in conf/rules, settled by tests/reference.py (docs/rules.md's
definitions, written without pipeline/bets.py) over every ordered deal of small shoes, equals the
library's exact figures: pipeline.exact for the fixed drawing tables, pipeline.games.value for the
chemin de fer games under pure strategies. The pays come from the YAML files, read here directly."""

from collections import Counter
from decimal import Decimal
from fractions import Fraction
from functools import cache
from itertools import permutations
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from reference import (
    banker_has_option,
    card_rank,
    card_value,
    chemin_de_fer_hands,
    hands_of,
    reference_net,
    reference_round,
)

from pipeline.cards import CARDS_PER_DECK, value_counts
from pipeline.exact import exact_odds
from pipeline.games.strategies import banker_draw_probabilities, load_strategy, player_draw_probabilities
from pipeline.games.value import count_deals, strategy_value
from pipeline.rule_sets import load_rule_set

RULES = Path(__file__).resolve().parents[2] / "conf" / "rules"
RULE_SETS = sorted(path.stem for path in RULES.glob("*.yaml"))
CHEMIN_DE_FER = ("chemin_de_fer", "chemin_de_fer_parlor")
# Settled per hand by tests/unit/test_banque.py's brute force; its rounds are not a two-hand deal.
TWO_HANDS = ("banque",)

# Card codes (rank = code // 4 + 1, suit = code % 4) -> copies. Nine cards, 60,480 ordered deals each:
# repeated codes (perfect pairs), Banker 6s and 7s of two and three cards, Player three-card 8s, ties.
SHOES = {
    "sevens_and_faces": {24: 2, 25: 1, 36: 1, 40: 1, 0: 1, 4: 1, 20: 1, 12: 1},
    "low_cards_and_pairs": {0: 2, 4: 2, 8: 1, 16: 1, 44: 1, 28: 1, 21: 1},
}


def cards_of(shoe: str) -> list[int]:
    return [code for code, copies in SHOES[shoe].items() for _ in range(copies)]


def codes_held(shoe: str) -> list[int]:
    return [SHOES[shoe].get(code, 0) for code in range(CARDS_PER_DECK)]


def bets_of(name: str) -> dict[str, SimpleNamespace]:
    """The rule set's bets as its YAML file writes them, without the library's Terms."""
    bets = yaml.safe_load((RULES / f"{name}.yaml").read_text())["bets"]
    return {kind: SimpleNamespace(pays=Decimal(terms["pays"]),
                                  pays_on_six=Decimal(terms["pays_on_six"]) if "pays_on_six" in terms else None,
                                  push_on_three_card_seven=terms.get("push_on_three_card_seven", False))
            for kind, terms in bets.items()}


@cache
def punto_banco_hands(shoe: str) -> Counter:
    """(Player's codes, Banker's codes) -> ordered deals, by the punto banco table."""
    hands = Counter()
    for deal in permutations(cards_of(shoe), 6):
        result = reference_round(*(card_value(code) for code in deal))
        player, banker = hands_of(deal, result.player_cards, result.banker_cards)
        hands[tuple(player), tuple(banker)] += 1
    return hands


def moments(hands: Counter, kind: str, terms) -> tuple[Fraction, Fraction, Counter]:
    """The mean and variance of the net of one unit on `kind`, and how often each net comes."""
    nets = Counter()
    for (player, banker), deals in hands.items():
        nets[reference_net(kind, terms, list(player), list(banker))] += deals
    total = sum(nets.values())
    mean = sum(Fraction(net) * deals for net, deals in nets.items()) / total
    square = sum(Fraction(net) ** 2 * deals for net, deals in nets.items()) / total
    return mean, square - mean**2, nets


FIXED_TABLES = [name for name in RULE_SETS if name not in CHEMIN_DE_FER + TWO_HANDS]


@pytest.mark.parametrize("shoe", SHOES)
@pytest.mark.parametrize("name", FIXED_TABLES)
def test_every_bet_of_a_fixed_table_settles_as_the_reference_says(name, shoe):
    odds = exact_odds(load_rule_set(name), codes_held(shoe))
    bets = bets_of(name)
    assert set(odds.bets) == set(bets)
    for kind, terms in bets.items():
        mean, variance, _ = moments(punto_banco_hands(shoe), kind, terms)
        assert (odds.bets[kind].ev, odds.bets[kind].variance) == (mean, variance), (name, kind)


def cases(player: tuple, banker: tuple) -> set[str]:
    """The cases docs/rules.md's bets tell apart that a round's two hands fall in."""
    pt, bt = (sum(card_value(code) for code in hand) % 10 for hand in (player, banker))
    found = {"tie"} if pt == bt else {f"banker wins with {len(banker)} cards and {bt}" if bt > pt
                                      else f"player wins with {len(player)} cards and {pt}"}
    for side, hand in (("player", player), ("banker", banker)):
        if card_rank(hand[0]) == card_rank(hand[1]):
            found.add(f"{side} pair" if hand[0] != hand[1] else f"{side} perfect pair")
    return found


def test_the_small_shoes_deal_every_case_the_bets_tell_apart():
    dealt = set().union(*(cases(*hands) for shoe in SHOES for hands in punto_banco_hands(shoe)))
    assert dealt >= {"tie", "player pair", "banker pair", "player perfect pair", "banker perfect pair",
                     "banker wins with 2 cards and 6", "banker wins with 3 cards and 6",
                     "banker wins with 2 cards and 7", "banker wins with 3 cards and 7",
                     "player wins with 3 cards and 8", "player wins with 2 cards and 8"}


# Pure strategy pairs, as the reference plays them: the Player draws at 5 or not; the Banker follows
# the punto banco table at his option cells (None), or draws at every one of them.
PURE_PAIRS = {
    "chemin_de_fer": [("player_stands_at_5", False, "banker_follows_punto_banco", False),
                      ("player_draws_at_5", True, "banker_always_draws", True)],
    "chemin_de_fer_parlor": [("player_stands_at_5", False, "banker_follows_punto_banco", False),
                             ("player_draws_at_5", True, "banker_follows_punto_banco", False)],
}


def chemin_de_fer_deals(name: str, shoe: str, draws_at_5: bool, banker_draws_at_options: bool) -> Counter:
    def banker_chooses(total, cards, v):
        return True if banker_draws_at_options and banker_has_option(name, total, v) else None

    hands = Counter()
    for deal in permutations(cards_of(shoe), 6):
        *_, player_cards, banker_cards = chemin_de_fer_hands(*(card_value(code) for code in deal),
                                                             draws_at_5, banker_chooses)
        player, banker = hands_of(deal, player_cards, banker_cards)
        hands[tuple(player), tuple(banker)] += 1
    return hands


@pytest.mark.parametrize(("name", "pair"), [(name, pair) for name in CHEMIN_DE_FER for pair in PURE_PAIRS[name]])
def test_both_bets_of_chemin_de_fer_settle_as_the_reference_says(name, pair):
    player, draws_at_5, banker, banker_draws = pair
    rule_set, bets = load_rule_set(name), bets_of(name)
    assert set(bets) == {"player", "banker"}
    draw, shoe = rule_set.draw, "sevens_and_faces"
    value = strategy_value(count_deals(draw, value_counts(codes_held(shoe))),
                           player_draw_probabilities(draw, load_strategy(f"{name}_{player}")),
                           banker_draw_probabilities(draw, load_strategy(f"{name}_{banker}")), rule_set.commission)
    hands = chemin_de_fer_deals(name, shoe, draws_at_5, banker_draws)
    assert value.player == moments(hands, "player", bets["player"])[0]
    assert value.banker == moments(hands, "banker", bets["banker"])[0]


def test_every_rule_set_is_settled_here_or_by_its_own_brute_force():
    assert set(RULE_SETS) == set(FIXED_TABLES) | set(CHEMIN_DE_FER) | set(TWO_HANDS)
    assert set(bets_of("banque")) == {"player", "banker"}
