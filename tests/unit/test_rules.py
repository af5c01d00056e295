"""The drawing rules: the table as data, checked cell by cell and over every card-value combination."""

import itertools

import pytest

from pipeline.rules import PLAYER_STOOD, Result, load_draw_rules, play_round
from reference import reference_round

# The banker table exactly as docs/rules.md prints it: total -> (draws when v is, stands when v is).
RULES_MD_BANKER_TABLE = {
    0: ("always", "—"),
    1: ("always", "—"),
    2: ("always", "—"),
    3: ("0–7, 9", "8"),
    4: ("2–7", "0, 1, 8, 9"),
    5: ("4–7", "0–3, 8, 9"),
    6: ("6, 7", "0–5, 8, 9"),
    7: ("never", "always"),
}


def printed_values(cell: str) -> set[int]:
    if cell == "always":
        return set(range(10))
    if cell in ("never", "—"):
        return set()
    values = set()
    for part in cell.split(", "):
        low, _, high = part.partition("–")
        values |= set(range(int(low), int(high or low) + 1))
    return values


@pytest.fixture(scope="module")
def draw():
    return load_draw_rules("punto_banco")


@pytest.mark.parametrize("total", range(8))
@pytest.mark.parametrize("third", range(10))
def test_banker_cell_matches_rules_md(draw, total, third):
    draws_on, stands_on = (printed_values(cell) for cell in RULES_MD_BANKER_TABLE[total])
    assert draws_on | stands_on == set(range(10)) and not draws_on & stands_on
    assert bool(draw.banker_draws[total, third]) == (third in draws_on)


@pytest.mark.parametrize("total", range(8))
def test_banker_after_player_stood_draws_on_0_to_5(draw, total):
    assert bool(draw.banker_draws[total, PLAYER_STOOD]) == (total <= 5)


def test_player_draws_on_0_to_5_only(draw):
    assert [bool(d) for d in draw.player_draws[:8]] == [True] * 6 + [False] * 2


def test_every_card_value_combination_matches_the_plain_reference(draw):
    mismatches = [
        values
        for values in itertools.product(range(10), repeat=6)
        if play_round(values, draw) != reference_round(*values)
    ]
    assert mismatches == []


def test_worked_example_of_seed_001(draw):
    # Player 2,3 (5), Banker 4,2 (6); Player draws 7 -> 2; Banker draws on 6 against a 7; a 2 makes 8.
    result = play_round([2, 4, 3, 2, 7, 2], draw)
    assert result == Result(player_total=2, banker_total=8, player_cards=3, banker_cards=3)
    assert result.winner == "B"


def test_natural_nine_beats_natural_eight(draw):
    assert play_round([4, 4, 5, 4, 0, 0], draw).winner == "P"



# Chemin de fer (docs/rules.md): the Player chooses at 5; the casino Banker at 3 v 9, 4 v 1, 5 v 4 and 6 when
# the Player stood, the punto banco table elsewhere; the parlor Banker at every cell of totals 0-7.
CASINO_OPTION_CELLS = {(3, 9), (4, 1), (5, 4), (6, PLAYER_STOOD)}


@pytest.mark.parametrize("name", ["chemin_de_fer", "chemin_de_fer_parlor"])
def test_chemin_de_fer_player_draws_on_0_to_4_and_chooses_at_5(name):
    table = load_draw_rules(name)
    assert [bool(d) for d in table.player_draws[:8]] == [True] * 5 + [False] * 3
    assert [bool(o) for o in table.player_options] == [total == 5 for total in range(10)]
    assert table.has_options


@pytest.mark.parametrize("total", range(8))
@pytest.mark.parametrize("column", range(11))
def test_chemin_de_fer_banker_cells(draw, total, column):
    casino, parlor = load_draw_rules("chemin_de_fer"), load_draw_rules("chemin_de_fer_parlor")
    assert bool(casino.banker_options[total, column]) == ((total, column) in CASINO_OPTION_CELLS)
    if not casino.banker_options[total, column]:
        assert casino.banker_draws[total, column] == draw.banker_draws[total, column]
    assert parlor.banker_options[total, column] and not parlor.banker_draws[total, column]


def test_punto_banco_has_no_options(draw):
    assert not draw.has_options and not draw.player_options.any() and not draw.banker_options.any()
