"""A strategy file that reused a shipped strategy's name was shown under that name (odds, simulate, the
bet_performance mart) though it plays otherwise: it is shown as the file, NAME.yaml, as the repair
commands name it (pipeline/config_files.py shipped_or_file); a shipped strategy keeps its name."""

import json

import pytest
import yaml

from pipeline.config_files import known_names, resource
from pipeline.games.strategies import load_strategy, shown_name

SHIPPED = "chemin_de_fer_player_draws_at_5"
BANKER = "chemin_de_fer_banker_follows_punto_banco"


def _renamed_copy(tmp_path, draw: str) -> str:
    document = yaml.safe_load(resource("conf", "strategies", f"{SHIPPED}.yaml").read_text(encoding="utf-8"))
    document["cells"] = [{**cell, "draw": draw} for cell in document["cells"]]
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("name", known_names("strategies"))
def test_a_shipped_strategy_is_shown_by_its_name(name):
    assert shown_name(load_strategy(name)) == name


def test_a_file_reusing_a_shipped_strategy_s_name_was_shown_as_the_shipped_strategy(cli, tmp_path):
    mine = _renamed_copy(tmp_path, draw="0")  # stands at 5 where the shipped one draws
    assert shown_name(load_strategy(mine)) == f"{SHIPPED}.yaml"
    status, out, err = cli("odds", "--rules", "chemin_de_fer", "--player-strategy", mine, "--banker-strategy", BANKER)
    assert (status, err) == (0, "")
    assert out.splitlines()[0] == f"chemin_de_fer, 6 decks: Player {SHIPPED}.yaml v Banker {BANKER}"
    status, out, _ = cli("odds", "--rules", "chemin_de_fer", "--player-strategy", mine, "--banker-strategy", BANKER,
                         "--json")
    assert status == 0 and json.loads(out)["player_strategy"] == f"{SHIPPED}.yaml"


def test_a_file_that_is_the_shipped_strategy_is_shown_by_its_name(cli, tmp_path):
    same = _renamed_copy(tmp_path, draw="1")
    status, out, _ = cli("odds", "--rules", "chemin_de_fer", "--player-strategy", same, "--banker-strategy", BANKER)
    assert status == 0 and out.splitlines()[0] == f"chemin_de_fer, 6 decks: Player {SHIPPED} v Banker {BANKER}"


def test_a_banque_policy_file_reusing_a_shipped_name_was_shown_as_the_shipped_policy(cli, tmp_path):
    policy = "banque_banker_follows_punto_banco"
    document = yaml.safe_load(resource("conf", "banque", f"{policy}.yaml").read_text(encoding="utf-8"))
    for when_split, shown in (("draw", f"{policy}.yaml"), (document["when_split"], policy)):
        path = tmp_path / f"{when_split}.yaml"
        path.write_text(yaml.safe_dump({**document, "when_split": when_split}), encoding="utf-8")
        status, out, _ = cli("odds", "--rules", "banque", "--banker-policy", path, "--json")
        assert status == 0 and json.loads(out)["banker_policy"] == shown
