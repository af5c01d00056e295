"""The round groups a simulation task counts while dealing (pipeline/simulate/batch.py, round_groups) against
a plain count of the rounds it dealt, for every shipped one-hand rule set; and their place in the runs row
(pipeline/round_groups.py): merged across tasks, written and read back, checked against the outcome counts."""

import json
from collections import Counter
from datetime import UTC, datetime

import pytest

from pipeline.games.pairs import strategy_pair
from pipeline.round_groups import merged_round_groups
from pipeline.rule_sets import load_rule_set
from pipeline.runs import DamagedRun, FileEntry, RunRecord, miscounted
from pipeline.simulate.batch import Dealer

ONE_HAND_RULES = ["punto_banco", "super_six", "ez_baccarat", "europe", "chemin_de_fer", "chemin_de_fer_parlor"]


def counted_by_hand(rounds) -> Counter:
    """Rounds by (outcome, streak index, net cents of each bet), read from the dealt table's own columns."""
    nets = [name for name in rounds.column_names if name.startswith("net_")]
    columns = [rounds.column(name).to_pylist() for name in ("outcome", "streak_index", *nets)]
    return Counter((outcome, streak, *(int(net * 100) for net in round_nets))
                   for outcome, streak, *round_nets in zip(*columns))


@pytest.mark.parametrize("rules", ONE_HAND_RULES)
def test_the_groups_a_task_counts_are_its_rounds_columns(rules):
    rule_set = load_rule_set(rules)
    dealer = Dealer.of(rule_set, strategy_pair(rule_set, None, None))
    counts, by_hand = dealer.new_round_counts(), Counter()
    for first, shoes in ((0, 40), (40, 25)):  # two batches into one task's counts
        rounds, _ = dealer.deal(31, first, shoes, counts)
        by_hand += counted_by_hand(rounds)
    groups = dealer.round_groups(counts)
    assert {(outcome, streak, *cents): rounds for outcome, streak, rounds, *cents in groups} == by_hand
    assert len(groups[0]) == 3 + len(rule_set.bets)
    assert {streak for _, streak, *_ in groups} >= {0, 1, 2}


def test_tasks_groups_merge_by_adding_the_rounds_of_equal_groups():
    first = [["B", 0, 5, 95, -100], ["P", 1, 2, -100, 100]]
    second = [["B", 0, 3, 95, -100], ["B", 0, 1, 50, -100], ["T", 0, 4, 0, 0]]
    assert merged_round_groups([first, second]) == (("B", 0, 1, 50, -100), ("B", 0, 8, 95, -100),
                                                    ("P", 1, 2, -100, 100), ("T", 0, 4, 0, 0))


MOMENT = datetime(2026, 1, 1, tzinfo=UTC)
RUN = RunRecord(run_id="r", rules="punto_banco", rule_set={"decks": 8, "bets": ["player", "banker"]}, seed=1,
                shoes=1, rounds=10, banker_wins=6, player_wins=3, ties=1, partitions=1, software_version="0",
                spark_master="local", started_at=MOMENT, ended_at=MOMENT, versions={"rounds": 1, "shoes": 1},
                files=(FileEntry("rounds", "rounds/run_id=r/part-0.parquet", 10, 100, "0" * 64, 0, 0),),
                round_groups=(("B", 0, 6, -100, 95), ("P", 0, 3, 100, -100), ("T", 0, 1, 0, 0)))


def test_the_runs_row_keeps_the_groups_and_a_row_without_them_has_none():
    row = RUN.row()
    assert RunRecord.from_row(row) == RUN
    assert RunRecord.from_row(row | {"round_groups": None}).round_groups is None
    old_row = {name: value for name, value in row.items() if name != "round_groups"}  # dealt before the column
    assert RunRecord.from_row(old_row).round_groups is None


@pytest.mark.parametrize("groups", ['{"B": 1}', '[["B", 0, 6, -100]]', '[["X", 0, 6, -100, 95]]',
                                    '[["B", 0, 0, -100, 95]]', '[["B", -1, 6, -100, 95]]', '[["B", 0, 6, -1.5, 95]]'])
def test_malformed_groups_are_a_damaged_runs_row(groups):
    with pytest.raises(DamagedRun, match="round_groups is not a list of"):
        RunRecord.from_row(RUN.row() | {"round_groups": groups})


def test_groups_that_disagree_with_the_outcome_counts_are_an_edited_row():
    assert miscounted(RUN) is None
    edited = json.loads(RUN.row()["round_groups"])
    edited[0][2] = 7
    assert miscounted(RunRecord.from_row(RUN.row() | {"round_groups": json.dumps(edited)})) == (
        "its runs row records {'B': 6, 'P': 3, 'T': 1} rounds of each outcome, its round groups "
        "{'B': 7, 'P': 3, 'T': 1}")
