"""Rule sets as validated configuration, and the bad inputs they must refuse."""

from decimal import Decimal
from fractions import Fraction

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.config_files import resource
from pipeline.errors import BaccaratError
from pipeline.exact import exact_odds
from pipeline.rule_sets import known_rule_sets, load_rule_set


def test_shipped_rule_sets():
    assert {"punto_banco", "super_six", "europe"} <= set(known_rule_sets())
    punto = load_rule_set("punto_banco")
    assert punto.decks == 8 and punto.burn.enabled and punto.burn.ten_value_burns == 10
    assert {k: t.pays for k, t in punto.bets.items()} == {
        "player": 1, "banker": Decimal("0.95"), "tie": 8, "player_pair": 11, "banker_pair": 11,
    }
    six = load_rule_set("super_six")
    assert six.bets["banker"].pays == 1 and six.bets["banker"].pays_on_six == Decimal("0.5")
    assert six.bets["super_six"].pays == 12
    assert load_rule_set("europe").burn.enabled
    assert not any(load_rule_set(name).has_options for name in ("punto_banco", "super_six", "europe", "ez_baccarat"))


def test_chemin_de_fer_rule_sets_have_options_and_their_commission():
    casino, parlor = load_rule_set("chemin_de_fer"), load_rule_set("chemin_de_fer_parlor")
    assert casino.has_options and parlor.has_options
    assert (casino.decks, casino.commission, parlor.decks, parlor.commission) == (6, Fraction(1, 20), 6, 0)
    assert set(casino.bets) == set(parlor.bets) == {"player", "banker"}  # a tie pushes: no tie bet


@pytest.mark.parametrize("name", known_rule_sets())
def test_every_shipped_rule_set_has_exact_odds_or_says_it_needs_strategies(name):
    rule_set = load_rule_set(name)
    if rule_set.has_options:
        with pytest.raises(BaccaratError, match="leaves drawing decisions to the players.*--player-strategy"):
            exact_odds(rule_set)
    else:
        odds = exact_odds(rule_set)
        assert sum(odds.outcomes.values()) == odds.total_combinations


def test_payouts_are_exact_decimals():
    banker = load_rule_set("punto_banco").bets["banker"].pays
    assert isinstance(banker, Decimal) and banker == Decimal("0.95")


def test_a_new_table_needs_only_a_config_file(rules_file):
    path = rules_file({"name": "macau", "bets": {
        "banker": {"pays": "0.96"}, "tie": {"pays": "9"}, "either_pair": {"pays": "5"},
        "perfect_pair": {"pays": "25"}, "dragon_7": {"pays": "40"}, "panda_8": {"pays": "25"},
    }})
    odds = exact_odds(load_rule_set(str(path)))
    assert round(float(odds.bets["tie"].house_edge_pct), 2) == 4.84  # tie at 9:1
    assert round(float(odds.bets["banker"].house_edge_pct), 2) == 0.60  # 4 % commission


BAD_CONFIGS = [
    ({"decks": 0}, "decks: Input should be greater than or equal to 1"),
    ({"decks": 9}, "decks: Input should be less than or equal to 8"),
    ({"decks": "eight"}, "decks: Input should be a valid integer"),
    ({"bets": {"banker": {"pays": "-0.95"}}}, "bets.banker.pays: Input should be greater than or equal to 0"),
    ({"bets": {"banker": {"pays": "0.955"}}}, "bets.banker.pays: Decimal input should have no more than 2 decimal places"),
    ({"bets": {"insurance": {"pays": "1"}}}, "unknown bet kind 'insurance'"),
    ({"bets": {}}, "bets: Dictionary should have at least 1 item"),
    ({"bets": {"tie": {"pays": "8", "pays_on_six": "0.5"}}}, "apply to banker only"),
    ({"bets": {"tie": {"odds": "8"}}}, "bets.tie.pays: Field required"),
    ({"cut_card": {"cards_from_end": 500, "extra_round": True}}, "is outside the shoe"),
    ({"cut_card": {"cards_from_end": 3, "extra_round": True}}, "is outside the shoe"),
    ({"cut_card": {"cards_from_end": 0, "extra_round": True}}, "cards_from_end: Input should be greater than or equal to 1"),
    ({"burn": None}, "burn: Field required"),
    ({"decks": None}, "decks: Field required"),
    ({"draw_rules": "no_such_table"}, "draw rules 'no_such_table': file not found"),
    ({"draw_rules": "chemin_de_fer"}, "draw table 'chemin_de_fer' has options: its bets are player and banker only"),
    ({"draw_rules": "chemin_de_fer", "bets": {"player": {"pays": "1"}, "banker": {"pays": "0.85"}}},
     "the commission must be 0 to 0.1"),
    ({"draw_rules": "chemin_de_fer", "bets": {"player": {"pays": "1"}, "banker": {"pays": "1", "pays_on_six": "0.5"}}},
     "pays the Player 1:1 and the Banker 1:1 less a commission"),
    ({"colour": "green"}, "colour: Extra inputs are not permitted"),
]


@pytest.mark.parametrize(("changes", "message"), [
    ({"decks": True}, "decks: Input should be a valid integer"),
    ({"decks": 6.0}, "decks: Input should be a valid integer"),
    ({"burn": {"enabled": True, "ten_value_burns": True}}, "burn.ten_value_burns: Input should be a valid integer"),
    ({"cut_card": {"cards_from_end": "14", "extra_round": True}}, "cut_card.cards_from_end: Input should be a valid integer"),
])
def test_a_boolean_or_float_where_a_whole_number_belongs_was_taken_for_one(rules_file, changes, message):
    """`decks: true` loaded as a 1-deck table (and `ten_value_burns: true` as 1): a wrong type in a rule
    set is refused like any other, in one line."""
    with pytest.raises(BaccaratError) as refused:
        load_rule_set(str(rules_file(changes)))
    assert message in str(refused.value) and "\n" not in str(refused.value)


def test_a_key_given_twice_is_refused_naming_it(tmp_path):
    """YAML keeps the last of two equal keys silently: `player` paying 2 would give Player +43 % EV."""
    text = resource("conf", "rules", "punto_banco.yaml").read_text()
    path = tmp_path / "twice.yaml"
    path.write_text(text.replace('  player: {pays: "1"}', '  player: {pays: "1"}\n  player: {pays: "2"}'))
    assert path.read_text().count("player: {pays") == 2
    with pytest.raises(BaccaratError) as error:
        load_rule_set(str(path))
    assert "duplicate key 'player'" in str(error.value) and "at line" in str(error.value)


def test_a_key_given_twice_in_a_draw_table_or_schema_file_is_refused(tmp_path):
    from pipeline.config_files import read_yaml

    path = tmp_path / "any.yaml"
    path.write_text("name: a\nname: b\n")
    with pytest.raises(BaccaratError, match="duplicate key 'name' at line 2"):
        read_yaml(path, "config")


@pytest.mark.parametrize(("changes", "message"), BAD_CONFIGS)
def test_bad_config_is_refused_with_a_precise_message(rules_file, changes, message):
    with pytest.raises(BaccaratError) as refused:
        load_rule_set(str(rules_file(changes)))
    assert message in str(refused.value)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize("text", ["decks: [", "- a list\n- not a mapping", "", "\x00\x01"])
def test_unparseable_files_are_refused(tmp_path, text):
    path = tmp_path / "broken.yaml"
    path.write_text(text)
    with pytest.raises(BaccaratError, match="rule set"):
        load_rule_set(str(path))


def test_cut_card_is_checked_again_when_decks_are_overridden(rules_file):
    path = rules_file({"cut_card": {"cards_from_end": 300, "extra_round": False}})
    assert load_rule_set(str(path)).cut_card.cards_from_end == 300
    with pytest.raises(BaccaratError, match="outside the shoe: with 1 deck it"):
        load_rule_set(str(path), decks=1)


@settings(max_examples=200, deadline=None)
@given(
    decks=st.one_of(st.integers(-5, 15), st.text(max_size=3), st.none()),
    pays=st.one_of(st.decimals(-5, 50, places=3, allow_nan=False), st.text(max_size=4), st.none()),
    cut=st.one_of(st.integers(-10, 600), st.booleans()),
)
def test_any_config_either_loads_valid_or_fails_with_one_line(tmp_path_factory, decks, pays, cut):
    path = tmp_path_factory.mktemp("prop") / "rules.yaml"
    document = yaml.safe_load(resource("conf", "rules", "punto_banco.yaml").read_text())
    document.update(decks=decks, cut_card={"cards_from_end": cut, "extra_round": True})
    document["bets"]["banker"] = {"pays": None if pays is None else str(pays)}
    path.write_text(yaml.safe_dump(document))
    try:
        rule_set = load_rule_set(str(path))
    except BaccaratError as error:
        assert "\n" not in str(error) and str(error).startswith("rule set")
    else:
        assert 1 <= rule_set.decks <= 8 and rule_set.bets["banker"].pays >= 0
        assert 11 <= rule_set.cut_card.cards_from_end <= rule_set.cards - 12


@pytest.mark.parametrize(("decks", "cut", "said"), [(1, 50, "with 1 deck it must be 11 to 40"),
                                                    (2, 100, "with 2 decks it must be 11 to 92")])
def test_a_one_deck_cut_card_out_of_the_shoe_said_with_1_decks(rules_file, decks, cut, said):
    with pytest.raises(BaccaratError) as refused:
        load_rule_set(str(rules_file({"decks": decks, "cut_card": {"cards_from_end": cut, "extra_round": True}})))
    assert said in str(refused.value)
