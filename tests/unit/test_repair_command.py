"""The repair command verify names deals the damaged run's own rule set again: for a run dealt from a rules
file that kept a shipped set's name, it named the shipped set, and pasted it replaced the run with
another game's rows under the same id."""

import shlex
from dataclasses import replace

from test_run_counts import RUN

from pipeline.rule_sets import load_rule_set
from pipeline.runs import repair_command
from pipeline.storage import Store

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
