"""The repair command verify names deals the damaged run's own rule set, strategies and banque policy
again: for a run dealt from a rules (strategy, policy) file that kept a shipped name, it named the shipped
one, and pasted it replaced the run with another game's rows under the same id."""

import json
import shlex
from dataclasses import replace

from test_run_counts import RUN

from pipeline.games.banque import load_policy
from pipeline.games.pairs import StrategyPair
from pipeline.games.strategies import load_strategy, strategy_document
from pipeline.rule_sets import load_rule_set
from pipeline.runs import repair_command
from pipeline.storage import Store
from pipeline.tasks import content_key, part_name

SHIPPED = replace(RUN, rule_set=load_rule_set("punto_banco").model_dump(mode="json"))


def _rules(run, tmp_path) -> str:
    words = shlex.split(repair_command(Store.parse(str(tmp_path)), run))
    return words[words.index("--rules") + 1]


def test_a_run_of_a_shipped_rule_set_is_dealt_again_by_its_name(tmp_path):
    assert _rules(SHIPPED, tmp_path) == "punto_banco"


def test_a_run_dealt_from_a_file_that_kept_a_shipped_name_was_repaired_with_the_shipped_rules(tmp_path):
    tie_pays_9 = {**SHIPPED.rule_set, "bets": {**SHIPPED.rule_set["bets"], "tie": {
        **SHIPPED.rule_set["bets"]["tie"], "pays": "9"}}}
    assert _rules(replace(SHIPPED, rule_set=tie_pays_9), tmp_path) == "punto_banco.yaml"


def test_a_run_of_a_rule_set_no_shipped_file_names_is_given_its_file(tmp_path):
    house = replace(SHIPPED, rules="house_rules", rule_set={**SHIPPED.rule_set, "name": "house_rules"})
    assert _rules(house, tmp_path) == "house_rules.yaml"


def test_a_banque_run_of_other_decks_is_still_the_shipped_set_its_decks_option_overrides(tmp_path):
    banque = load_rule_set("banque").model_dump(mode="json")
    run = replace(SHIPPED, rules="banque", rule_set={**banque, "decks": 6}, versions={"banque_rounds": 1},
                  banque={"decks": 6, "banker_policy": {"name": "p"}, "player_strategies": [{"name": "s"}]})
    assert _rules(run, tmp_path) == "banque"


CDF = replace(SHIPPED, rules="chemin_de_fer", rule_set=load_rule_set("chemin_de_fer").model_dump(mode="json"),
              strategies=StrategyPair(load_strategy("chemin_de_fer_player_stands_at_5"),
                                      load_strategy("chemin_de_fer_banker_always_draws")).document())
BANQUE = replace(SHIPPED, rules="banque", rule_set=load_rule_set("banque").model_dump(mode="json"),
                 versions={"banque_rounds": 1},
                 banque={"decks": 6, "banker_policy": load_policy("banque_banker_follows_punto_banco").model_dump(),
                         "player_strategies": [strategy_document(load_strategy("banque_player_draws_at_5"))] * 2})


def _option(run, option, tmp_path) -> str:
    words = shlex.split(repair_command(Store.parse(str(tmp_path)), run))
    return words[len(words) - 1 - words[::-1].index(option) + 1]


def _edited(document: dict, **changes) -> dict:
    return json.loads(json.dumps({**document, **changes}))  # as a runs row holds it


def test_runs_of_shipped_strategies_and_policies_are_dealt_again_by_their_names(tmp_path):
    assert [_option(CDF, option, tmp_path) for option in ("--player-strategy", "--banker-strategy")] == [
        "chemin_de_fer_player_stands_at_5", "chemin_de_fer_banker_always_draws"]
    assert [_option(BANQUE, option, tmp_path) for option in ("--banker-policy", "--player-strategy")] == [
        "banque_banker_follows_punto_banco", "banque_player_draws_at_5,banque_player_draws_at_5"]


def test_a_run_of_an_edited_strategy_that_kept_a_shipped_name_was_repaired_with_the_shipped_strategy(tmp_path):
    stands = _edited(CDF.strategies["banker"], otherwise="stand")
    run = replace(CDF, strategies={**CDF.strategies, "banker": stands})
    assert [_option(run, option, tmp_path) for option in ("--player-strategy", "--banker-strategy")] == [
        "chemin_de_fer_player_stands_at_5", "chemin_de_fer_banker_always_draws.yaml"]


def test_a_banque_run_of_an_edited_policy_or_strategy_was_repaired_with_the_shipped_ones(tmp_path):
    policy, strategy = BANQUE.banque["banker_policy"], BANQUE.banque["player_strategies"][0]
    edited = {**BANQUE.banque, "banker_policy": _edited(policy, when_split="larger_stake"),
              "player_strategies": [strategy, _edited(strategy, description="my own")]}
    run = replace(BANQUE, banque=edited)
    assert [_option(run, option, tmp_path) for option in ("--banker-policy", "--player-strategy")] == [
        "banque_banker_follows_punto_banco.yaml", "banque_player_draws_at_5,banque_player_draws_at_5.yaml"]


def test_an_edited_seed_in_a_runs_row_gave_a_repair_command_that_dealt_another_run_under_its_id(tmp_path):
    """A runs row whose seed was edited: verify named `simulate --seed NEW ... --overwrite`, which dealt
    other rows under the run's id, and the run then verified. The files carry the content key of the
    parameters they were dealt with, so the edit shows, and no command is read from such a row."""
    key = content_key(SHIPPED.parameters)
    dealt = replace(SHIPPED, files=tuple(
        replace(entry, path=f"{entry.table}/run_id=r/{part_name(entry.first_shoe, entry.last_shoe + 1, key)}")
        for entry in SHIPPED.files))
    out = Store.parse(str(tmp_path))
    assert shlex.split(repair_command(out, dealt))[:2] == ["baccarat", "simulate"]
    for edited in (replace(dealt, seed=dealt.seed + 6), replace(dealt, shoes=dealt.shoes + 1)):
        refused = repair_command(out, edited)
        assert "--seed" not in refused and "not those its files were dealt with" in refused, refused
