"""A runs row that does not agree with its files: edited counts, which verify passed as sound, and paths
that sent verify and the marts outside the store."""

import hashlib
from dataclasses import replace
from datetime import datetime, timezone

import pyarrow.parquet as pq
import pytest

from pipeline.runs import BANQUE_ROUNDS, FileEntry, RunRecord, in_its_folder, miscounted, run_problems
from pipeline.schemas import contract
from pipeline.storage import Store

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




@pytest.mark.parametrize("path", ["../outside/part-0.parquet", "rounds/run_id=other/part-0.parquet",
                                  "rounds/run_id=r/../../shoes/run_id=r/part-0.parquet", "rounds/run_id=r/part-0.txt",
                                  "marts/streaks/run_id=r/part-0.parquet", "{tmp}/part-0.parquet"])
def test_a_runs_row_listing_a_file_outside_the_runs_folder_sent_verify_outside_the_store(tmp_path, path):
    """The file the edited row lists follows the rounds contract and has the size and checksum the row
    records: only its place gives it away."""
    path = path.format(tmp=tmp_path)
    store = Store.parse(str(tmp_path / "data"))
    target = tmp_path / "data" / path
    target.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(contract("rounds").arrow(tuple(RUN.bets)).empty_table(), target)
    entry = replace(RUN.files[0], path=path, size=target.stat().st_size,
                    sha256=hashlib.sha256(target.read_bytes()).hexdigest())
    assert run_problems(store, replace(RUN, files=(entry,)), committed=False) == [
        f"run 'r': its runs row lists {path!r}, not a Parquet file in the run's folder of the rounds table"]
    assert in_its_folder(RUN.files[0], "r") and not in_its_folder(entry, "r")
