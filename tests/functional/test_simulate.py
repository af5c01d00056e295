"""The simulation job: every round checked by the independent reference, shoes replayed card by
card, frequencies against the exact odds, determinism across partitionings, and the commit."""

import os
import time
from collections import Counter
from decimal import Decimal
from math import sqrt

import numpy as np
import polars as pl
import pytest
from spark_jobs import read_table, simulate
from polars.testing import assert_frame_equal
from reference import big_road_places, card_value, reference_net, reference_round

from pipeline.exact import exact_odds
from pipeline.jobs import already_committed, run_job
from pipeline.rule_sets import load_rule_set
from pipeline.runs import check_run, committed_runs, read_run
from pipeline.simulate import job
from pipeline.simulate.kernel import shuffled_shoe
from pipeline.storage import Store

CHECKED_RULE_SETS = ["punto_banco", "super_six", "ez_baccarat"]  # between them, every bet kind


@pytest.fixture(scope="module")
def small_runs(spark, tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    return out, {rules: simulate(spark, out, rules=rules, seed=11, shoes=150) for rules in CHECKED_RULE_SETS}


def hands(row: dict) -> tuple[list[int], list[int]]:
    player = [row["player_card1"], row["player_card2"]] + ([row["player_card3"]] if row["player_card3"] is not None else [])
    banker = [row["banker_card1"], row["banker_card2"]] + ([row["banker_card3"]] if row["banker_card3"] is not None else [])
    return player, banker


@pytest.mark.parametrize("rules", CHECKED_RULE_SETS)
def test_every_round_obeys_the_drawing_rules_and_pays_exactly(small_runs, rules):
    out, records = small_runs
    rule_set = load_rule_set(rules)
    rounds = read_table(out, records[rules].run_id, "rounds")
    assert rounds.height == records[rules].rounds > 100 * 70
    for row in rounds.iter_rows(named=True):
        player, banker = hands(row)
        values = [card_value(c) for c in (player[0], banker[0], player[1], banker[1])]
        thirds = [card_value(c) for c in player[2:] + banker[2:]] + [0, 0]
        expected = reference_round(*values, *thirds[:2])
        if len(player) == 2 and len(banker) == 3:  # the Banker's third card is the fifth dealt
            expected = reference_round(*values, card_value(banker[2]), 0)
        assert (row["player_total"], row["banker_total"], len(player), len(banker)) == (
            expected.player_total, expected.banker_total, expected.player_cards, expected.banker_cards,
        ), row
        assert row["outcome"] == expected.winner
        assert row["player_natural"] == (sum(values[::2]) % 10 >= 8)
        assert row["banker_natural"] == (sum(values[1::2]) % 10 >= 8)
        assert row["player_pair"] == (player[0] // 4 == player[1] // 4)
        assert row["banker_pair"] == (banker[0] // 4 == banker[1] // 4)
        for kind, terms in rule_set.bets.items():
            assert row[f"net_{kind}"] == reference_net(kind, terms, player, banker), (kind, row)


@pytest.mark.parametrize("rules", CHECKED_RULE_SETS)
def test_shoe_totals_add_up_the_shoes_rounds(small_runs, rules):
    out, records = small_runs
    run_id = records[rules].run_id
    rounds = read_table(out, run_id, "rounds")
    outcome = pl.col("outcome")
    expected = rounds.group_by("shoe_id", maintain_order=True).agg(
        banker_wins=(outcome == "B").sum(), player_wins=(outcome == "P").sum(), ties=(outcome == "T").sum(),
        naturals=(pl.col("player_natural") | pl.col("banker_natural")).sum(),
        player_pairs=pl.col("player_pair").sum(), banker_pairs=pl.col("banker_pair").sum(),
        big_road_columns=pl.col("big_road_column").filter(outcome != "T").n_unique(),
        *(pl.col(f"net_{bet}").sum().cast(pl.Decimal(18, 2)) for bet in load_rule_set(rules).bets),
    )
    shoes = read_table(out, run_id, "shoes")
    assert_frame_equal(shoes.select(expected.columns), expected, check_dtypes=False)
    for row, dealt in zip(shoes.iter_rows(named=True), rounds.partition_by("shoe_id", maintain_order=True)):
        for side, name in (("B", "banker"), ("P", "player"), ("T", "tie")):
            longest, run = 0, 0
            for outcome_of_round in dealt["outcome"]:  # ties do not break a Banker or Player streak
                if outcome_of_round == side:
                    run += 1
                elif side == "T" or outcome_of_round != "T":
                    run = 0
                longest = max(longest, run)
            assert row[f"longest_{name}_streak"] == longest, (side, row["shoe_id"])


def test_nets_are_exact_decimals_with_two_places(small_runs):
    out, records = small_runs
    rounds = read_table(out, records["punto_banco"].run_id, "rounds")
    assert rounds.schema["net_banker"] == pl.Decimal(9, 2)
    assert set(rounds["net_banker"].to_list()) == {Decimal("0.95"), Decimal("-1"), Decimal("0")}


@pytest.mark.parametrize("rules", CHECKED_RULE_SETS)
def test_each_shoe_is_dealt_in_order_from_its_own_shuffle(small_runs, rules):
    out, records = small_runs
    rule_set = load_rule_set(rules)
    run_id = records[rules].run_id
    rounds = read_table(out, run_id, "rounds")
    shoes = read_table(out, run_id, "shoes")
    assert shoes["shoe_id"].to_list() == list(range(150))
    for shoe, dealt in zip(shoes.iter_rows(named=True), rounds.partition_by("shoe_id", maintain_order=True)):
        cards = shuffled_shoe(np.uint64(int(shoe["rng_seed"])), rule_set.decks).tolist()
        assert Counter(cards) == {code: rule_set.decks for code in range(52)}
        position = 1 + shoe["cards_burned"]
        assert shoe["burn_card"] == cards[0]
        assert shoe["cards_burned"] == (card_value(cards[0]) or 10)
        cut_round = None
        used = Counter(cards[:position])
        places = big_road_places("".join(dealt["outcome"]))
        for row, place in zip(dealt.iter_rows(named=True), places, strict=True):
            assert (row["big_road_column"], row["streak_index"]) == place
            player, banker = hands(row)
            in_order = [player[0], banker[0], player[1], banker[1]] + player[2:] + banker[2:]
            assert row["cards_left"] == rule_set.cards - position
            assert in_order == cards[position: position + len(in_order)]
            used.update(in_order)
            position += len(in_order)
            if cut_round is None and position >= shoe["cut_card_position"]:
                cut_round = row["round"]
        assert max(used.values()) <= rule_set.decks
        assert shoe["cut_card_position"] == rule_set.cards - rule_set.cut_card.cards_from_end
        assert shoe["cut_card_round"] == cut_round
        assert shoe["rounds"] == dealt.height == cut_round + 1  # the cut card's round, then one more
        assert dealt["round"].to_list() == list(range(1, dealt.height + 1))
        assert shoe["cards_used"] == position


@pytest.mark.slow
def test_a_million_rounds_agree_with_the_exact_odds(spark, tmp_path):
    record = simulate(spark, tmp_path, seed=2026, shoes=12_500, partitions=4)
    n = record.rounds
    assert n >= 1_000_000
    odds = exact_odds(load_rule_set("punto_banco"))
    for code, name in (("B", "banker"), ("P", "player"), ("T", "tie")):
        p = float(odds.probability(name))
        assert abs(record.outcomes[code] / n - p) < 4 * sqrt(p * (1 - p) / n), name
    rounds = read_table(tmp_path, record.run_id, "rounds")
    for kind, bet in odds.bets.items():
        mean = float(rounds[f"net_{kind}"].cast(pl.Float64).mean())
        assert abs(mean - float(bet.ev)) < 4 * bet.sd / sqrt(n), kind


def test_same_content_for_1_and_7_partitions(spark, tmp_path):
    one = simulate(spark, tmp_path / "one", seed=99, shoes=210, partitions=1)
    seven = simulate(spark, tmp_path / "seven", seed=99, shoes=210, partitions=7)
    assert (len(one.files), len(seven.files)) == (2, 14)
    for table in ("rounds", "shoes"):
        assert_frame_equal(read_table(tmp_path / "one", one.run_id, table),
                           read_table(tmp_path / "seven", seven.run_id, table))


def test_same_seed_same_bytes(spark, tmp_path):
    first = simulate(spark, tmp_path / "a", seed=5, shoes=120)
    second = simulate(spark, tmp_path / "b", seed=5, shoes=120)
    assert [f.sha256 for f in first.files] == [f.sha256 for f in second.files]
    other = simulate(spark, tmp_path / "c", seed=6, shoes=120)
    assert [f.sha256 for f in first.files] != [f.sha256 for f in other.files]


def test_the_runs_row_lists_every_file_with_rows_and_checksum(small_runs):
    out, records = small_runs
    store = Store.parse(str(out))
    record = read_run(store, records["punto_banco"].run_id)
    assert record == records["punto_banco"]
    assert record.spark_master == "local[2]" and record.partitions == 3
    for entry in record.files:
        assert store.sha256(entry.path) == entry.sha256
        assert pl.read_parquet(out / entry.path, hive_partitioning=False).height == entry.rows
    assert sum(f.rows for f in record.files_of("shoes")) == record.shoes
    for table in ("rounds", "shoes"):
        committed = store.partition_files(table, record.run_id, record.versions[table])
        assert [(f["path"], f["rows"]) for f in committed] == sorted(
            (f.path, f.rows) for f in record.files_of(table))
    check_run(store, record)


def test_a_changed_byte_fails_verification(spark, tmp_path):
    record = simulate(spark, tmp_path, seed=4, shoes=30)
    path = tmp_path / record.files[0].path
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(Exception, match="fails its checksum"):
        check_run(Store.parse(str(tmp_path)), record)


def test_temporaries_of_dead_attempts_are_removed_at_commit(spark, tmp_path):
    plan = job.Plan("debris", load_rule_set(), 12, 40, Store.parse(str(tmp_path)), 2)
    already_committed(plan, overwrite=False)
    folder = tmp_path / "rounds" / "run_id=debris"
    folder.mkdir(parents=True)
    (folder / f".part-000000000000-000000000019.parquet.{plan.job}.dead.tmp").write_bytes(b"half a file")
    other_job = folder / ".part-000000000000-000000000019.parquet.0123456789ab.live.tmp"
    other_job.write_bytes(b"another job writing now")
    old_job = folder / ".part-000000000000-000000000019.parquet.ba9876543210.dead.tmp"
    old_job.write_bytes(b"a job that died an hour ago")
    os.utime(old_job, (time.time() - 3600, time.time() - 3600))
    record = run_job(spark, plan)
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [other_job.name] + [f.path.rsplit("/", 1)[1] for f in record.files_of("rounds")])


def test_a_run_without_its_runs_row_does_not_exist(spark, tmp_path):
    from deltalake import DeltaTable

    record = simulate(spark, tmp_path, seed=3, shoes=50)
    store = Store.parse(str(tmp_path))
    assert committed_runs(store) == [record.run_id]
    DeltaTable(str(tmp_path / "runs")).delete(f"run_id = '{record.run_id}'")
    assert committed_runs(store) == []
    assert read_run(store, record.run_id) is None


def test_uncommitted_leftovers_are_never_read_and_the_rerun_is_identical(spark, tmp_path):
    clean = simulate(spark, tmp_path / "clean", seed=8, shoes=90)
    plan = job.Plan(clean.run_id, load_rule_set(), 8, 90, Store.parse(str(tmp_path / "crashed")), 3)
    job.write_range(plan, 0, 30)  # one task's files, never committed
    partial = tmp_path / "crashed" / "rounds" / f"run_id={plan.run_id}" / f".part-x.parquet.{plan.job}.0.tmp"
    partial.write_bytes(b"partial")
    assert committed_runs(plan.out) == []
    rerun = simulate(spark, tmp_path / "crashed", seed=8, shoes=90)
    assert [f.sha256 for f in rerun.files] == [f.sha256 for f in clean.files]
    folder = tmp_path / "crashed" / "rounds" / f"run_id={plan.run_id}"
    assert sorted(p.name for p in folder.iterdir() if p != partial) == sorted(
        f.path.rsplit("/", 1)[1] for f in rerun.files_of("rounds"))
    assert read_table(tmp_path / "crashed", plan.run_id, "rounds").height == rerun.rounds  # never read
