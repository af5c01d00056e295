"""The merge of the marts' partials (pipeline/marts/partials.py): merged columns summed, or their least or
greatest value taken, or co-moments moved to the merged means, by key, in their own types; partials whose
keys lie in one range only are concatenated; and how one process runs the ranges."""

import threading
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest

from pipeline.marts import partials
from pipeline.marts.partials import COMPOSITION_MERGED, MERGED, ShoeRange, merge, on_every_core

NET = pa.decimal128(38, 2)


def edges(block: list[int], rounds: list[int], net: list[str]) -> pa.Table:
    return pa.table({"size": pa.array([100] * len(block), pa.int32()), "block": pa.array(block, pa.int64()),
                     "rounds": pa.array(rounds, pa.int64()), "net_banker": pa.array([Decimal(n) for n in net], NET)})


def test_a_block_straddling_two_ranges_is_summed_from_both():
    merged = merge(MERGED["session_edges"], [edges([0, 1], [100, 40], ["1.50", "-3.00"]),
                                             edges([1, 2], [60, 7], ["0.95", "2.00"])])
    assert merged.schema == edges([], [], []).schema
    assert sorted(merged.to_pylist(), key=lambda row: row["block"]) == [
        {"size": 100, "block": 0, "rounds": 100, "net_banker": Decimal("1.50")},
        {"size": 100, "block": 1, "rounds": 100, "net_banker": Decimal("-2.05")},
        {"size": 100, "block": 2, "rounds": 7, "net_banker": Decimal("2.00")}]


def test_one_row_partials_sum_every_column():
    def totals(rounds, shoes, wins):
        return pa.table({name: pa.array([value], pa.int64()) for name, value in zip(
            MERGED["outcome_totals"], (rounds, shoes, wins, wins + 1, 2))})

    [merged] = merge(MERGED["outcome_totals"], [totals(160, 2, 70), totals(81, 1, 30)]).to_pylist()
    assert merged == {"rounds": 241, "shoes": 3, "banker_wins": 100, "player_wins": 102, "ties": 4}


def test_round_groups_sum_their_weights_by_every_other_column():
    def groups(outcome, index, net, weight):
        return pa.table({"outcome": outcome, "streak_index": pa.array(index, pa.int16()),
                         "net_player": pa.array([Decimal(n) for n in net], pa.decimal128(18, 2)),
                         "weight": pa.array(weight, pa.int64())})

    merged = merge(MERGED["round_groups"], [groups(["B", "P"], [0, 0], ["-1.00", "1.00"], [5, 4]),
                                    groups(["B", "B"], [0, 1], ["-1.00", "-1.00"], [2, 1])])
    assert sorted(merged.to_pylist(), key=lambda row: (row["outcome"], row["streak_index"])) == [
        {"outcome": "B", "streak_index": 0, "net_player": Decimal("-1.00"), "weight": 7},
        {"outcome": "B", "streak_index": 1, "net_player": Decimal("-1.00"), "weight": 1},
        {"outcome": "P", "streak_index": 0, "net_player": Decimal("1.00"), "weight": 4}]


def test_partials_keyed_in_one_range_are_concatenated_in_range_order():
    first, second = (pa.table({"run_row": pa.array(rows, pa.int64())}) for rows in ([0, 1], [2]))
    assert merge(MERGED["opening"], [first, second])["run_row"].to_pylist() == [0, 1, 2]
    assert MERGED["opening"] == MERGED["shoe_summary"] == MERGED["road_outcomes"] == {}


def test_count_levels_sum_their_sums_and_keep_the_least_and_greatest_values():
    def levels(level, rounds, sum_ev, min_ev, max_tc):
        return pa.table({"count_system": ["hi_lo"] * len(level), "bet": ["banker"] * len(level),
                         "direction": ["high"] * len(level), "level": pa.array(level, pa.int64()),
                         "rounds": pa.array(rounds, pa.int64()), "sum_ev": sum_ev, "min_ev": min_ev, "max_tc": max_tc})

    first = levels([0, 1], [3, 2], [0.5, -0.25], [-0.1, 0.2], [0.4, 0.9])
    merged = merge(COMPOSITION_MERGED["count_levels"], [first, levels([1], [4], [1.0], [-0.3], [0.7])])
    assert merged.schema == first.schema
    assert sorted(merged.to_pylist(), key=lambda row: row["level"]) == [
        {"count_system": "hi_lo", "bet": "banker", "direction": "high", "level": 0, "rounds": 3, "sum_ev": 0.5,
         "min_ev": -0.1, "max_tc": 0.4},
        {"count_system": "hi_lo", "bet": "banker", "direction": "high", "level": 1, "rounds": 6, "sum_ev": 0.75,
         "min_ev": -0.3, "max_tc": 0.9}]


def test_count_levels_merge_their_co_moments_about_the_merged_means_without_raw_sums():
    """EVs near -0.0122 with a spread of 1e-5: the variance is 1e-6 of the mean square, where raw sums of
    squares lose their digits. The co-moments of two ranges, merged, are those of all the rounds at once."""
    rng = np.random.default_rng(7)
    ev, tc = -0.0122 + 1e-5 * rng.standard_normal(3000), rng.standard_normal(3000)
    parts = [slice(0, 1000), slice(1000, 1001), slice(1001, 3000)]  # a range of one round too

    def levels(part: slice) -> pa.Table:
        x, y = tc[part], ev[part]
        return pa.table({"count_system": ["hi_lo"], "bet": ["player"], "direction": ["high"],
                         "level": pa.array([0], pa.int64()), "rounds": pa.array([len(x)], pa.int64()),
                         "sum_ev": [y.sum()], "sum_tc": [x.sum()], "m2_ev": [y.var() * len(y)],
                         "m2_tc": [x.var() * len(x)], "m2_tc_ev": [((x - x.mean()) * (y - y.mean())).sum()]})

    [merged] = merge(COMPOSITION_MERGED["count_levels"], [levels(part) for part in parts]).to_pylist()
    assert merged["rounds"] == 3000
    assert merged["m2_ev"] == pytest.approx(ev.var() * 3000, rel=1e-9)
    assert merged["m2_tc"] == pytest.approx(tc.var() * 3000, rel=1e-9)
    assert merged["m2_tc_ev"] == pytest.approx(((tc - tc.mean()) * (ev - ev.mean())).sum(), rel=1e-9)


def test_perfect_play_merges_the_co_moment_of_the_per_shoe_net_over_shoes():
    """perfect_bets counts shoes, not rounds: the co-moment of the per-shoe net of three ranges, merged
    about the merged mean per shoe, is that of every shoe at once."""
    net = np.round(np.random.default_rng(3).normal(0.4, 3.0, 50), 2)
    parts = [slice(0, 7), slice(7, 8), slice(8, 50)]

    def bets(part: slice) -> pa.Table:
        nets = net[part]
        return pa.table({"bet": ["dragon_7"], "shoes": pa.array([len(nets)], pa.int64()),
                         "rounds": pa.array([80 * len(nets)], pa.int64()), "sum_net": [nets.sum()],
                         "m2_net": [nets.var() * len(nets)]})

    [merged] = merge(COMPOSITION_MERGED["perfect_bets"], [bets(part) for part in parts]).to_pylist()
    assert (merged["shoes"], merged["rounds"]) == (50, 4000)
    assert merged["sum_net"] == pytest.approx(net.sum(), rel=1e-12)
    assert merged["m2_net"] == pytest.approx(net.var() * 50, rel=1e-9)


def test_one_process_builds_a_local_runs_ranges_a_core_each_on_one_thread(monkeypatch):
    """on_every_core, as Spark's local tasks: as many ranges at once as cores (the first three meet at a
    barrier, which breaks unless they run together), each engine on one thread."""
    monkeypatch.setattr(partials, "usable_cores", lambda: 3)
    together = threading.Barrier(3, timeout=5)

    def task(shoes: ShoeRange) -> tuple[int, int | None]:
        if shoes.first < 3:
            together.wait()
        return shoes.first, shoes.threads

    ranges = [ShoeRange(first, first + 1, (), ()) for first in range(7)]
    assert on_every_core(task, ranges) == [(first, 1) for first in range(7)]
