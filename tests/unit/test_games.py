"""Chemin de fer: strategies as data, the exact value of a strategy pair, and the solver, each checked
by something that does not trust it: brute force over every deal of tiny shoes, the exact odds of
punto banco, the finite shoe as it grows, the evaluator for every pure deviation from each printed
equilibrium, and an independent linear program."""

import itertools
import json
import random
from collections import Counter
from fractions import Fraction
from functools import cache

import nashpy
import numpy as np
import pytest
import yaml
from reference import reference_chemin_de_fer
from scipy.optimize import linprog

from pipeline.errors import BaccaratError
from pipeline.exact import exact_odds
from pipeline.games.strategies import (
    banker_draw_probabilities,
    known_strategies,
    load_strategy,
    player_draw_probabilities,
    validated_strategy,
)
from pipeline.games.value import INFINITE, against_player, count_deals, pair_value, strategy_value
from pipeline.rule_sets import load_rule_set
from pipeline.rules import PLAYER_STOOD, load_draw_rules

CASINO_OPTIONS = {(3, 9), (4, 1), (5, 4), (6, None)}  # docs/rules.md: Banker total v the Player's third card


@cache
def deals(game: str, decks) -> object:
    return count_deals(load_draw_rules(game), decks)


def fraction(text: str) -> Fraction:
    return Fraction(text)


# --- strategies as data ---------------------------------------------------------------------------

def test_every_shipped_strategy_loads_and_fits_its_game():
    assert len(known_strategies()) >= 6
    for name in known_strategies():
        strategy = load_strategy(name)
        strategy.check_fits(load_rule_set(strategy.game), strategy.side)


def test_following_punto_banco_is_the_punto_banco_table_at_every_cell():
    draw, punto = load_draw_rules("chemin_de_fer_parlor"), load_draw_rules("punto_banco")
    banker = banker_draw_probabilities(draw, load_strategy("chemin_de_fer_parlor_banker_follows_punto_banco"))
    for a, b, column in itertools.product(range(10), range(10), range(11)):
        if (a + b) % 10 < 8:
            assert banker[a, b, column] == punto.banker_draws[(a + b) % 10, column]
    player = player_draw_probabilities(draw, load_strategy("chemin_de_fer_parlor_player_stands_at_5"))
    assert list(player[:8]) == [1, 1, 1, 1, 1, 0, 0, 0]


def test_a_mixed_cell_keyed_by_cards_touches_that_hand_only():
    strategy = validated_strategy({
        "name": "mixed", "game": "chemin_de_fer", "side": "banker", "banker_sees": "cards", "otherwise": "stand",
        "cells": [{"cards": [7, 9], "player_third": None, "draw": "9/11"}, {"cards": [1, 2], "player_third": 9,
                                                                            "draw": 0.25}]}, "test")
    banker = banker_draw_probabilities(load_draw_rules("chemin_de_fer"), strategy)
    assert banker[7, 9, PLAYER_STOOD] == banker[9, 7, PLAYER_STOOD] == Fraction(9, 11)
    assert banker[0, 6, PLAYER_STOOD] == 0 and banker[1, 2, 9] == Fraction(1, 4) and banker[0, 3, 9] == 0
    assert banker[0, 6, 6] == 1 and banker[0, 0, 9] == 1  # fixed cells keep the table


PLAYER_BASE = {"name": "p", "game": "chemin_de_fer", "side": "player", "otherwise": "punto_banco",
               "cells": [{"total": 5, "draw": "1"}]}
BANKER_BASE = {"name": "b", "game": "chemin_de_fer", "side": "banker", "banker_sees": "total",
               "otherwise": "punto_banco", "cells": [{"total": 3, "player_third": 9, "draw": "1"}]}
BAD_STRATEGIES = [
    (PLAYER_BASE, {"cells": [{"total": 6, "draw": "1"}]}, "draw table 'chemin_de_fer' gives the Player no option at 6"),
    (PLAYER_BASE, {"game": "punto_banco"}, "draw table 'punto_banco' gives the Player no option at 5"),
    (PLAYER_BASE, {"cells": [{"total": 5, "draw": "abc"}]}, "'abc' is not a probability"),
    (PLAYER_BASE, {"cells": [{"total": 5, "draw": "1/0"}]}, "'1/0' is not a probability"),
    (PLAYER_BASE, {"cells": [{"total": 5, "draw": 1.5}]}, "probability 1.5 is outside [0, 1]"),
    (PLAYER_BASE, {"cells": [{"total": 5, "draw": "-1/11"}]}, "probability '-1/11' is outside [0, 1]"),
    (PLAYER_BASE, {"cells": [{"total": 5, "draw": True}]}, "True is not a probability"),
    (PLAYER_BASE, {"cells": [{"total": 5, "draw": None}]}, "None is not a probability"),
    (PLAYER_BASE, {"cells": [{"total": 5, "draw": "1"}, {"total": 5, "draw": "0"}]}, "given twice"),
    (PLAYER_BASE, {"game": "baccara_royale"}, "game 'baccara_royale' is not a draw table"),
    (PLAYER_BASE, {"banker_sees": "total"}, "banker_sees (total or cards) is given for a banker strategy"),
    (PLAYER_BASE, {"cells": [{"total": 5, "player_third": 3, "draw": "1"}]}, "a player cell gives his total only"),
    (BANKER_BASE, {"cells": [{"total": 7, "player_third": 0, "draw": "1"}]},
     "cells.0 (total 7 v 0): not an option cell of draw table 'chemin_de_fer'"),
    (BANKER_BASE, {"cells": [{"total": 6, "player_third": 9, "draw": "1"}]}, "not an option cell"),
    (BANKER_BASE, {"cells": [{"total": 3, "draw": "1"}]}, "give player_third"),
    (BANKER_BASE, {"cells": [{"cards": [1, 2], "player_third": 9, "draw": "1"}]}, "key the cell by total only"),
    (BANKER_BASE, {"banker_sees": "cards"}, "key the cell by cards only"),
    (BANKER_BASE, {"banker_sees": "cards", "cells": [{"total": 4, "cards": [1, 2], "player_third": 9, "draw": 1}]},
     "cards 1,2 make 3, not 4"),
    (BANKER_BASE, {"banker_sees": None}, "banker_sees (total or cards) is given for a banker strategy"),
    (BANKER_BASE, {"banker_sees": "everything"}, "banker_sees: Input should be 'total' or 'cards'"),
    (BANKER_BASE, {"cells": [{"total": 3, "player_third": 10, "draw": "1"}]}, "less than or equal to 9"),
    (BANKER_BASE, {"otherwise": "guess"}, "otherwise: Input should be 'punto_banco', 'draw' or 'stand'"),
    (BANKER_BASE, {"colour": "red"}, "colour: Extra inputs are not permitted"),
]


@pytest.mark.parametrize(("base", "changes", "message"), BAD_STRATEGIES)
def test_a_bad_strategy_is_refused_in_one_line(tmp_path, base, changes, message):
    path = tmp_path / "strategy.yaml"
    path.write_text(yaml.safe_dump({**base, **changes}))
    with pytest.raises(BaccaratError) as refused:
        load_strategy(str(path))
    assert message in str(refused.value) and "\n" not in str(refused.value)
    assert str(refused.value).startswith("strategy ")


def test_a_strategy_for_the_wrong_game_or_side_is_refused():
    casino = load_rule_set("chemin_de_fer")
    with pytest.raises(BaccaratError, match="is for the game 'chemin_de_fer_parlor', but rule set 'chemin_de_fer'"):
        load_strategy("chemin_de_fer_parlor_player_draws_at_5").check_fits(casino, "player")
    with pytest.raises(BaccaratError, match="is a banker strategy, given for the player"):
        load_strategy("chemin_de_fer_banker_always_draws").check_fits(casino, "player")


# --- the exact evaluator --------------------------------------------------------------------------

@pytest.mark.parametrize("decks", [1, 6, 8])
def test_following_punto_banco_gives_the_exact_odds_of_punto_banco(decks):
    """Two independent counts: the fixed tableau through the evaluator, and pipeline/exact.py."""
    value = pair_value(load_rule_set("chemin_de_fer", decks), decks, load_strategy("chemin_de_fer_player_draws_at_5"),
                       load_strategy("chemin_de_fer_banker_follows_punto_banco"))
    odds = exact_odds(load_rule_set("punto_banco", decks))
    assert (value.player, value.banker) == (odds.bets["player"].ev, odds.bets["banker"].ev)
    assert value.player_wins == odds.probability("player") and value.banker_wins == odds.probability("banker")


TINY_SHOES = {  # cards per value 0..9: nine cards, 60,480 ordered six-card deals each
    "low": [2, 1, 1, 1, 1, 1, 1, 1, 0, 0],
    "spread": [1, 0, 1, 1, 2, 1, 1, 0, 1, 1],
    "tens": [3, 1, 1, 1, 0, 1, 0, 1, 1, 0],
}


@cache
def every_deal(shoe: str) -> Counter:
    cards = [value for value, held in enumerate(TINY_SHOES[shoe]) for _ in range(held)]
    return Counter(itertools.permutations(cards, 6))


def random_pure_pair(game: str, rng: random.Random):
    """A pure Player choice at 5, and a pure Banker choice at every option cell, by his cards."""
    draw = load_draw_rules(game)
    draws_at_5 = rng.random() < 0.5
    choices = {(a, b, column): rng.random() < 0.5 for a in range(10) for b in range(a, 10) for column in range(11)
               if (a + b) % 10 < 8 and draw.banker_options[(a + b) % 10, column]}
    player = player_draw_probabilities(draw)
    player[5] = Fraction(int(draws_at_5))
    banker = banker_draw_probabilities(draw)
    for (a, b, column), choice in choices.items():
        banker[a, b, column] = banker[b, a, column] = Fraction(int(choice))

    def banker_chooses(total, cards, v):
        key = (min(cards), max(cards), PLAYER_STOOD if v is None else v)
        return choices.get(key)

    return draws_at_5, banker_chooses, player, banker


@pytest.mark.parametrize("shoe", TINY_SHOES)
@pytest.mark.parametrize("game", ["chemin_de_fer", "chemin_de_fer_parlor"])
def test_finite_shoe_counts_equal_brute_force_over_every_deal(game, shoe):
    counts = count_deals(load_draw_rules(game), TINY_SHOES[shoe])
    assert counts.total == sum(every_deal(shoe).values()) == 60_480
    rng = random.Random(f"{game}-{shoe}")
    for _ in range(3):
        draws_at_5, banker_chooses, player, banker = random_pure_pair(game, rng)
        wins = Counter()
        for deal, ways in every_deal(shoe).items():
            pt, bt = reference_chemin_de_fer(*deal, draws_at_5, banker_chooses)
            wins["player" if pt > bt else "banker" if bt > pt else "tie"] += ways
        value = strategy_value(counts, player, banker)
        assert (value.player_wins * counts.total, value.banker_wins * counts.total) == (wins["player"], wins["banker"])


def test_the_reference_keeps_the_casino_table_outside_its_four_option_cells():
    """The brute force above gives the casino Banker a choice only where chemin_de_fer.yaml has one."""
    draw = load_draw_rules("chemin_de_fer")
    options = {(int(t), None if c == PLAYER_STOOD else int(c)) for t, c in zip(*np.nonzero(draw.banker_options))}
    assert options == CASINO_OPTIONS


def test_a_mixed_pair_is_the_average_of_the_pure_pairs():
    draw, counts = load_draw_rules("chemin_de_fer"), deals("chemin_de_fer", 6)
    player, banker = player_draw_probabilities(draw), banker_draw_probabilities(draw)
    pure = {}
    for p, q in itertools.product((0, 1), repeat=2):
        player[5], banker[3, 3, PLAYER_STOOD] = Fraction(p), Fraction(q)
        pure[p, q] = strategy_value(counts, player, banker, Fraction(1, 20)).banker
    player[5], banker[3, 3, PLAYER_STOOD] = Fraction(9, 11), Fraction(1, 3)
    mixed = strategy_value(counts, player, banker, Fraction(1, 20)).banker
    weights = {(p, q): (Fraction(9, 11) if p else Fraction(2, 11)) * (Fraction(1, 3) if q else Fraction(2, 3))
               for p, q in pure}
    assert mixed == sum(weights[k] * pure[k] for k in pure)


def test_the_infinite_deck_is_the_limit_of_the_finite_shoe():
    """The finite-shoe value approaches the infinite-deck one as 1/decks: decks x (gap) settles."""
    draw = load_draw_rules("chemin_de_fer")
    player, banker = player_draw_probabilities(draw), banker_draw_probabilities(draw)
    infinite = strategy_value(deals("chemin_de_fer", INFINITE), player, banker).player
    assert deals("chemin_de_fer", INFINITE).total == 13**6
    scaled = [decks * (strategy_value(count_deals(draw, decks), player, banker).player - infinite)
              for decks in (100, 400)]
    assert scaled[0] != 0 and abs(scaled[1] / scaled[0] - 1) < 0.002


# --- the solver -------------------------------------------------------------------------------------

def solved(cli, *args) -> dict:
    status, out, err = cli("solve", *args, "--json")
    assert (status, err) == (0, "")
    return json.loads(out)


def test_kemeny_snell_player_draws_at_5_with_probability_9_11(cli):
    document = solved(cli, "--rules", "chemin_de_fer_parlor", "--decks", "infinite", "--banker-sees", "total",
                      "--commission", "0")
    assert document["player_draw_at_5"] == "9/11" and document["player_draw_at_5_float"] == 9 / 11
    assert set(document) >= {"rules", "decks", "banker_sees", "commission", "value", "player_draw_at_5", "banker"}
    assert (document["decks"], document["banker_sees"], document["commission"]) == ("infinite", "total", "0")
    assert fraction(document["value"]["player"]) == -fraction(document["value"]["banker"])


def equilibrium_strategies(rules: str, document: dict):
    """The printed equilibrium, read back as strategy data (unlisted cells follow punto banco)."""
    game = load_rule_set(rules).draw_rules
    player = validated_strategy({"name": "solved_player", "game": game, "side": "player", "otherwise": "punto_banco",
                                 "cells": [{"total": 5, "draw": document["player_draw_at_5"]}]}, "solved")
    cells = [{key: cell[key] for key in ("total", "cards", "player_third", "draw")} for cell in document["banker"]]
    banker = validated_strategy({"name": "solved_banker", "game": game, "side": "banker", "otherwise": "punto_banco",
                                 "banker_sees": document["banker_sees"], "cells": cells}, "solved")
    return player, banker


def information_sets(game: str, banker_sees: str) -> list[list[tuple[int, int, int]]]:
    """The Banker's choices, each as the (a, b, column) cells it covers, from the draw table alone."""
    draw = load_draw_rules(game)
    sets = {}
    for a, b, column in itertools.product(range(10), range(10), range(11)):
        total = (a + b) % 10
        if a <= b and total < 8 and draw.banker_options[total, column]:
            sets.setdefault((total, column) if banker_sees == "total" else (a, b, column), []).append((a, b, column))
    return list(sets.values())


MODELS = [(rules, decks, sees, commission) for rules in ("chemin_de_fer", "chemin_de_fer_parlor")
          for decks, sees in [("infinite", "total"), ("1", "total"), ("6", "total"), ("8", "total"),
                              ("infinite", "cards"), ("6", "cards")]
          for commission in ("0", "0.05")]


@pytest.mark.parametrize(("rules", "decks", "sees", "commission"), MODELS)
def test_every_printed_equilibrium_is_a_pair_of_mutual_best_responses(cli, rules, decks, sees, commission):
    document = solved(cli, "--rules", rules, "--decks", decks, "--banker-sees", sees, "--commission", commission)
    rule_set = load_rule_set(rules)
    draw, counts = rule_set.draw, deals(rules, decks if decks == INFINITE else int(decks))
    cut = Fraction(commission)
    player_strategy, banker_strategy = equilibrium_strategies(rules, document)
    player, banker = player_draw_probabilities(draw, player_strategy), banker_draw_probabilities(draw, banker_strategy)
    value = strategy_value(counts, player, banker, cut)
    assert (value.player, value.banker) == tuple(fraction(document["value"][side]) for side in ("player", "banker"))
    for p in (0, 1):  # the Player's pure deviations at 5
        deviation = player.copy()
        deviation[5] = Fraction(p)
        assert strategy_value(counts, deviation, banker, cut).player <= value.player
    against = against_player(counts, player)
    for cells in information_sets(rules, sees):  # the Banker's pure deviations, one choice at a time
        for q in (0, 1):
            deviation = banker.copy()
            for a, b, column in cells:
                deviation[a, b, column] = deviation[b, a, column] = Fraction(q)
            assert against.value(deviation, cut).banker <= value.banker


CASINO_CELLS = [(3, 9), (4, 1), (5, 4), (6, PLAYER_STOOD)]
BANKER_PURE = list(itertools.product((0, 1), repeat=len(CASINO_CELLS)))  # a choice at each casino option cell


def normal_form(decks, commission: Fraction = Fraction(0)) -> tuple[np.ndarray, np.ndarray]:
    """The casino game's gains (Player's, Banker's), Player pure strategy (stand, draw at 5) by Banker
    pure strategy (BANKER_PURE), from the evaluator."""
    draw, counts = load_draw_rules("chemin_de_fer"), deals("chemin_de_fer", decks)
    gains = np.zeros((2, 2, len(BANKER_PURE)))
    for p in (0, 1):
        player = player_draw_probabilities(draw)
        player[5] = Fraction(p)
        for j, choices in enumerate(BANKER_PURE):
            banker = banker_draw_probabilities(draw)
            for (total, column), choice in zip(CASINO_CELLS, choices):
                for a, b in itertools.product(range(10), repeat=2):
                    if (a + b) % 10 == total:
                        banker[a, b, column] = Fraction(choice)
            value = strategy_value(counts, player, banker, commission)
            gains[:, p, j] = float(value.player), float(value.banker)
    return gains[0], gains[1]


@pytest.mark.parametrize("decks", [INFINITE, 1, 6])
def test_the_minimax_value_matches_an_independent_linear_program(cli, decks):
    matrix, _ = normal_form(decks)
    columns = matrix.shape[1]
    # The Player: maximise v subject to v <= (1-p) A[stand, j] + p A[draw, j] for every Banker column j.
    player = linprog(c=[0, 0, -1], A_ub=np.column_stack([-matrix.T, np.ones(columns)]), b_ub=np.zeros(columns),
                     A_eq=[[1, 1, 0]], b_eq=[1], bounds=[(0, 1), (0, 1), (None, None)], method="highs")
    # The Banker: minimise w subject to sum_j y_j A[i, j] <= w for both Player rows.
    banker = linprog(c=[0] * columns + [1], A_ub=np.column_stack([matrix, -np.ones(2)]), b_ub=np.zeros(2),
                     A_eq=[[1] * columns + [0]], b_eq=[1], bounds=[(0, 1)] * columns + [(None, None)], method="highs")
    assert player.status == banker.status == 0
    document = solved(cli, "--rules", "chemin_de_fer", "--decks", decks, "--commission", "0")
    assert player.x[2] == pytest.approx(document["value_float"]["player"], abs=1e-12)
    assert banker.x[-1] == pytest.approx(document["value_float"]["player"], abs=1e-12)
    assert document["unique"] and player.x[1] == pytest.approx(document["player_draw_at_5_float"], abs=1e-9)


@pytest.mark.parametrize("decks", [INFINITE, 1, 6])
def test_the_commission_game_has_the_one_equilibrium_vertex_enumeration_finds(cli, decks):
    """nashpy enumerates the extreme equilibria of the casino game's 2 x 16 bimatrix, built by the
    evaluator: one vertex, so one equilibrium, and it is the one `solve` prints."""
    player_gains, banker_gains = normal_form(decks, Fraction(1, 20))
    found = list(nashpy.Game(player_gains, banker_gains).vertex_enumeration())
    document = solved(cli, "--rules", "chemin_de_fer", "--decks", decks, "--commission", "0.05")
    assert len(found) == 1 and document["unique"]
    player_mix, banker_mix = found[0]
    assert player_mix[1] == pytest.approx(document["player_draw_at_5_float"], abs=1e-9)
    printed = {(cell["total"], PLAYER_STOOD if cell["player_third"] is None else cell["player_third"]):
               cell["draw_float"] for cell in document["banker"]}
    punto = load_draw_rules("punto_banco").banker_draws
    for k, cell in enumerate(CASINO_CELLS):
        draws = sum(weight for weight, choices in zip(banker_mix, BANKER_PURE) if choices[k])
        assert draws == pytest.approx(printed.get(cell, float(punto[cell])), abs=1e-9)


def test_uniqueness_is_denied_where_hands_of_one_total_are_interchangeable(cli):
    """With replacement the Banker's cards say nothing his total does not: his mixing can be spread over
    the hands of a total in many ways, so the equilibrium is not unique; seeing totals, it is."""
    args = ("--rules", "chemin_de_fer_parlor", "--decks", "infinite", "--commission", "0")
    by_cards, by_total = solved(cli, *args, "--banker-sees", "cards"), solved(cli, *args, "--banker-sees", "total")
    assert not by_cards["unique"] and by_total["unique"]
    assert by_cards["value"] == by_total["value"] and by_cards["player_draw_at_5"] == by_total["player_draw_at_5"]


def test_the_banker_list_names_each_departure_from_punto_banco(cli):
    document = solved(cli, "--rules", "chemin_de_fer", "--decks", "6", "--banker-sees", "cards", "--commission", "0")
    punto = load_draw_rules("punto_banco").banker_draws
    for cell in document["banker"]:
        assert set(cell) == {"total", "cards", "player_third", "draw", "draw_float"}
        assert sum(cell["cards"]) % 10 == cell["total"]
        column = PLAYER_STOOD if cell["player_third"] is None else cell["player_third"]
        assert fraction(cell["draw"]) != punto[cell["total"], column]
        assert float(fraction(cell["draw"])) == cell["draw_float"]


# --- the command line -------------------------------------------------------------------------------

def test_odds_of_a_strategy_pair_prints_exact_fractions(cli):
    status, out, err = cli("odds", "--rules", "chemin_de_fer", "--player-strategy", "chemin_de_fer_player_stands_at_5",
                           "--banker-strategy", "chemin_de_fer_banker_always_draws", "--decks", "infinite", "--json")
    assert (status, err) == (0, "")
    document = json.loads(out)
    assert (document["decks"], document["commission"]) == ("infinite", "1/20")
    chances = {side: fraction(p) for side, p in document["probabilities"].items()}
    assert sum(chances.values()) == 1 and all(13**6 % p.denominator == 0 for p in chances.values())
    assert fraction(document["value"]["player"]) == chances["player"] - chances["banker"]
    assert fraction(document["value"]["banker"]) == Fraction(19, 20) * chances["banker"] - chances["player"]
    status, out, _ = cli("odds", "--rules", "chemin_de_fer", "--player-strategy", "chemin_de_fer_player_stands_at_5",
                         "--banker-strategy", "chemin_de_fer_banker_always_draws")
    assert status == 0 and "6 decks" in out and "player gain per unit" in out


BAD_ARGUMENTS = [
    (["solve", "--commission", "0.11"], "commission 0.11 is outside [0, 0.1]"),
    (["solve", "--commission", "-0.01"], "commission -0.01 is outside [0, 0.1]"),
    # a commission just past the bound was shown rounded, as if it were the bound: "commission 0.1 is outside [0, 0.1]"
    (["solve", "--commission", "0.1000000000000000000001"], "commission 0.1000000000000000000001 is outside [0, 0.1]"),
    (["solve", "--commission", "11/100"], "commission 11/100 is outside [0, 0.1]"),
    (["solve", "--commission", "five"], "commission 'five' is not a number"),
    (["solve", "--banker-sees", "all"], "Invalid value for '--banker-sees'"),
    (["solve", "--decks", "9"], "Invalid value for '--decks'"),
    (["solve", "--decks", "endless"], "Invalid value for '--decks'"),
    (["solve", "--rules", "punto_banco"], "rule set 'punto_banco' fixes every drawing decision"),
    (["odds", "--decks", "infinite"], "--decks infinite is for games with options"),
    (["odds", "--rules", "chemin_de_fer"], "give --player-strategy NAME and --banker-strategy NAME"),
    (["odds", "--player-strategy", "chemin_de_fer_player_draws_at_5"], "'punto_banco' fixes every drawing decision"),
    (["odds", "--rules", "chemin_de_fer", "--player-strategy", "chemin_de_fer_parlor_player_draws_at_5",
      "--banker-strategy", "chemin_de_fer_banker_always_draws"], "is for the game 'chemin_de_fer_parlor'"),
    (["odds", "--rules", "chemin_de_fer", "--player-strategy", "no_such_strategy",
      "--banker-strategy", "chemin_de_fer_banker_always_draws"], "unknown strategy 'no_such_strategy'"),
    (["odds", "--rules", "chemin_de_fer", "--player-strategy", "/no/such.yaml",
      "--banker-strategy", "chemin_de_fer_banker_always_draws"], "strategy file not found: /no/such.yaml"),
]


@pytest.mark.parametrize(("args", "message"), BAD_ARGUMENTS)
def test_bad_arguments_give_one_line_and_exit_2(cli, args, message):
    status, out, err = cli(*args)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: ") and message in err


SHIPPED_EQUILIBRIA = [("chemin_de_fer_parlor", "infinite", "total"), ("chemin_de_fer_parlor", "6", "total"),
                      ("chemin_de_fer_parlor", "6", "cards"), ("chemin_de_fer", "6", "total"),
                      ("chemin_de_fer", "6", "cards")]


@pytest.mark.parametrize(("rules", "decks", "sees"), SHIPPED_EQUILIBRIA)
def test_the_shipped_equilibrium_strategies_are_what_solve_writes(cli, tmp_path, rules, decks, sees):
    status, out, err = cli("solve", "--rules", rules, "--decks", decks, "--banker-sees", sees, "--json",
                           "--write-strategies", tmp_path)
    assert status == 0 and err.count("wrote ") + err.count("already there: ") == 2
    model = f"{rules}_equilibrium_{decks}{'' if decks == INFINITE else '_decks'}_{sees}"
    for side in ("player", "banker"):
        assert load_strategy(str(tmp_path / f"{model}_{side}.yaml")) == load_strategy(f"{model}_{side}")
    status, odds, _ = cli("odds", "--rules", rules, "--decks", decks, "--player-strategy", f"{model}_player",
                          "--banker-strategy", f"{model}_banker", "--json")
    assert status == 0 and json.loads(odds)["value"] == json.loads(out)["value"]


def test_writing_strategies_keeps_a_different_file_already_there(cli, tmp_path):
    args = ("solve", "--rules", "chemin_de_fer_parlor", "--decks", "infinite", "--write-strategies", tmp_path)
    assert cli(*args)[0] == 0
    status, _, err = cli(*args)
    assert status == 0 and err.count("already there: ") == 2  # the same strategies again: nothing to do
    banker = tmp_path / "chemin_de_fer_parlor_equilibrium_infinite_total_banker.yaml"
    changed = banker.read_text().replace("859/2288", "1/2")
    banker.write_text(changed)
    status, out, err = cli(*args)
    assert status == 2 and err.count("\n") == 1 and "exists and holds another strategy" in err
    assert banker.read_text() == changed
    player = tmp_path / "chemin_de_fer_parlor_equilibrium_infinite_total_player.yaml"
    player.unlink()
    assert cli(*args)[0] == 2 and not player.exists()  # nothing is written when one file is in the way


def test_writing_strategies_into_a_file_is_one_line_and_leaves_it_alone(cli, tmp_path):
    target = tmp_path / "not_a_folder"
    target.write_text("mine")
    status, out, err = cli("solve", "--rules", "chemin_de_fer_parlor", "--decks", "infinite",
                           "--write-strategies", target)
    assert status == 2 and err.count("\n") == 1 and "is not a folder" in err
    assert target.read_text() == "mine" and sorted(tmp_path.iterdir()) == [target]
