"""A system file named like a shipped system but differing from it was backtested under that name, and
the marts then read the shipped system's unit and bet for it (drawdowns counted in the wrong unit)."""

import pytest
import yaml

from pipeline.backtest.job import _system_for
from pipeline.errors import BaccaratError
from pipeline.rule_sets import load_rule_set
from pipeline.systems import load_system

KEEP_SESSIONS = {"bankroll": None, "goal": None, "stop_loss": None, "max_rounds": None}


def _file(tmp_path, document: dict) -> str:
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump(document))
    return str(path)


def test_a_file_named_like_a_shipped_system_it_differs_from_was_backtested_under_that_name(tmp_path):
    impostor = load_system("flat_banker").model_dump(mode="json", exclude_unset=True)
    impostor.update(bet="player", unit="20", table={"minimum": "20", "maximum": "5000"})
    path = _file(tmp_path, impostor)
    with pytest.raises(BaccaratError) as refused:
        _system_for(path, KEEP_SESSIONS, load_rule_set("punto_banco"))
    assert str(refused.value) == (f"system {path!r} is named 'flat_banker', like a shipped one it differs from: "
                                  "rename it, so that the marts do not take the shipped system's unit and bet for it")


def test_a_copy_of_a_shipped_system_or_a_file_of_another_name_is_backtested(tmp_path):
    rule_set = load_rule_set("punto_banco")
    copy = load_system("flat_banker").model_dump(mode="json", exclude_unset=True)
    assert _system_for(_file(tmp_path, copy), KEEP_SESSIONS, rule_set) == load_system("flat_banker")
    renamed = copy | {"name": "flat_player_20", "bet": "player", "unit": "20",
                      "table": {"minimum": "20", "maximum": "5000"}}
    assert _system_for(_file(tmp_path, renamed), KEEP_SESSIONS, rule_set).unit == 20
    shipped_with_other_session = _system_for("flat_banker", KEEP_SESSIONS | {"max_rounds": 7}, rule_set)
    assert shipped_with_other_session.session.max_rounds == 7
