"""The report's run parameters: a chemin de fer run's page gave its exact EVs, which are those of the
strategy pair played, without naming the pair; its runs row records it, and bet_performance names it."""

from datetime import datetime, timezone

import polars as pl
import yaml

from pipeline.config_files import resource
from pipeline.report.page import parameters
from pipeline.rule_sets import load_rule_set
from pipeline.runs import RunRecord

PLAYER, BANKER = "chemin_de_fer_player_stands_at_5", "chemin_de_fer_banker_follows_punto_banco"


def _record(rules: str, strategies: dict | None) -> RunRecord:
    moment = datetime(2026, 1, 1, tzinfo=timezone.utc)
    return RunRecord(run_id="r", rules=rules, rule_set=load_rule_set(rules).model_dump(mode="json"), seed=1,
                     shoes=1, rounds=60, banker_wins=30, player_wins=25, ties=5, partitions=1, software_version="0",
                     spark_master="local[1]", started_at=moment, ended_at=moment, versions={"rounds": 1, "shoes": 1},
                     files=(), strategies=strategies)


def _strategy(name: str) -> dict:
    return yaml.safe_load(resource("conf", "strategies", f"{name}.yaml").read_text())


def test_a_chemin_de_fer_run_names_its_strategy_pair():
    pairs = dict(parameters("r", _record("chemin_de_fer", {"player": _strategy(PLAYER),
                                                           "banker": _strategy(BANKER)}), pl.DataFrame()))
    assert pairs["Strategies"] == f"Player {PLAYER}, Banker {BANKER}"


def test_a_strategy_edited_from_a_shipped_one_is_named_as_its_file():
    edited = _strategy(PLAYER) | {"description": "mine"}
    pairs = dict(parameters("r", _record("chemin_de_fer", {"player": edited, "banker": _strategy(BANKER)}),
                            pl.DataFrame()))
    assert pairs["Strategies"] == f"Player {PLAYER}.yaml, Banker {BANKER}"


def test_a_fixed_tableau_has_no_strategies_row():
    assert "Strategies" not in dict(parameters("r", _record("punto_banco", None), pl.DataFrame()))
