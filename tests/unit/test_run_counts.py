"""A runs row whose counts its files do not add up to: an edited row, which verify passed as sound."""

from dataclasses import replace
from datetime import datetime, timezone

import pytest

from pipeline.runs import BANQUE_ROUNDS, FileEntry, RunRecord, miscounted

MOMENT = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _entry(table: str, rows: int, first_shoe: int, last_shoe: int) -> FileEntry:
    return FileEntry(table, f"{table}/run_id=r/part-{first_shoe}.parquet", rows, 100, "0" * 64, first_shoe, last_shoe)


RUN = RunRecord(
    run_id="r", rules="punto_banco", rule_set={"decks": 8, "bets": ["player", "banker"]}, seed=1, shoes=4,
    rounds=300, banker_wins=140, player_wins=130, ties=30, partitions=2, software_version="0", spark_master="local",
    started_at=MOMENT, ended_at=MOMENT, versions={"rounds": 1, "shoes": 1},
    files=(_entry("rounds", 160, 0, 1), _entry("shoes", 2, 0, 1), _entry("rounds", 140, 2, 3), _entry("shoes", 2, 2, 3)))


def test_a_row_whose_counts_its_files_add_up_to_is_sound():
    assert miscounted(RUN) is None


@pytest.mark.parametrize("changes, message", [
    ({"rounds": 999}, "its runs row records 999 rounds, the rounds files it lists hold 300"),
    ({"shoes": 5}, "its runs row records 5 shoes, the shoes files it lists hold 4"),
    ({"ties": 31}, "its runs row records 300 rounds but 301 Banker wins, Player wins and ties"),
])
def test_an_edited_runs_row_passed_verify(changes, message):
    assert miscounted(replace(RUN, **changes)) == message


def test_a_banque_run_counts_both_hands_and_has_no_shoes_table():
    banque = replace(RUN, versions={BANQUE_ROUNDS: 1}, banker_wins=280, player_wins=260, ties=60,
                     banque={"decks": 6}, files=(_entry(BANQUE_ROUNDS, 300, 0, 3),))
    assert miscounted(banque) is None
    assert miscounted(replace(banque, rounds=299)) == ("its runs row records 299 rounds, the banque_rounds files "
                                                       "it lists hold 300")
