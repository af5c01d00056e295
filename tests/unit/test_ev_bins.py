"""`baccarat marts` on a 300,000-shoe run with round_ev rows outgrew a 24 GB machine (Polars killed by the
kernel; DuckDB past 4 GB): advantage_by_depth's partial kept a row per distinct exact EV, and exact EVs
hardly repeat. The partial now counts EVs in bins of width 2^-16, bounded by the EVs' spread, and the
percentiles are the least EV of the bin holding the nearest rank. Both engines against a plain-Python
reference, on EVs several to a bin, whole and merged from two ranges."""

import statistics

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa
import pytest
from reference import assert_rows_close, binned_rank

from pipeline.marts import composition_polars
from pipeline.marts.partials import COMPOSITION_MERGED, merge
from pipeline.marts.roads_duckdb import sql

ROUNDS = 20_000
GRID = 1_000  # distinct EVs of Banker: 250 bins of 2^-16, across 0 (some above 0)
BUCKETS = 416 // 26
PERCENTILES = ("p01", "p50", "p99")  # compared exactly: each is an EV some round had


@pytest.fixture(scope="module")
def round_evs() -> pa.Table:
    """EVs of one bet on a grid of 2^-18 (four to a bin, 250 bins), of another anywhere in [-1.5, -0.5)."""
    rng = np.random.default_rng(7)
    unseen = rng.integers(1, 417, ROUNDS)
    banker = -0.0001 + rng.integers(0, GRID, ROUNDS) * 2.0 ** -18
    player = -0.5 - rng.random(ROUNDS)
    return pa.table({"bet": ["banker"] * ROUNDS + ["player"] * ROUNDS,
                     "unseen_cards": pa.array(np.concatenate([unseen, unseen]), pa.int16()),
                     "ev": np.concatenate([banker, player])})


def reference(round_evs: pa.Table) -> list[dict]:
    groups: dict[tuple[str, int], list[float]] = {}
    for row in round_evs.to_pylist():
        groups.setdefault((row["bet"], (row["unseen_cards"] - 1) // 26 * 26 + 1), []).append(row["ev"])
    return [{"bet": bet, "unseen_low": low, "unseen_high": low + 25, "rounds": len(evs),
             "mean_ev": statistics.fmean(evs), "sd_ev": statistics.stdev(evs),
             "share_positive": sum(ev > 0 for ev in evs) / len(evs),
             **{f"p{p:02d}": binned_rank(sorted(evs), p) for p in (1, 50, 99)}}
            for (bet, low), evs in sorted(groups.items())]


def duckdb_groups(round_evs: pa.Table) -> pa.Table:
    with duckdb.connect() as con:
        con.register("round_evs", round_evs)
        return con.sql(sql("prep_ev_groups")).to_arrow_table()


def duckdb_depth(groups: pa.Table) -> list[dict]:
    with duckdb.connect() as con:
        con.register("ev_groups", groups)
        return con.sql(sql("advantage_by_depth")).to_arrow_table().to_pylist()


def polars_groups(round_evs: pa.Table) -> pa.Table:
    return composition_polars.ev_groups(pl.from_arrow(round_evs).lazy()).collect().to_arrow()


def polars_depth(groups: pa.Table) -> list[dict]:
    return composition_polars.advantage_by_depth(pl.from_arrow(groups).lazy()).collect().to_dicts()


@pytest.mark.parametrize("engine", ["duckdb", "polars"])
def test_the_percentiles_are_the_least_ev_of_the_nearest_ranks_bin(round_evs, engine):
    groups, depth = (duckdb_groups, duckdb_depth) if engine == "duckdb" else (polars_groups, polars_depth)
    assert_rows_close(depth(groups(round_evs)), reference(round_evs), exact=PERCENTILES)


@pytest.mark.parametrize("engine", ["duckdb", "polars"])
def test_the_groups_are_bounded_by_the_bins_not_the_distinct_evs(round_evs, engine):
    groups = (duckdb_groups if engine == "duckdb" else polars_groups)(round_evs)
    banker = pl.from_arrow(round_evs).filter(pl.col("bet") == "banker")
    buckets = banker.select((pl.col("unseen_cards") - 1) // 26, (pl.col("ev") * 2 ** 16).floor())
    assert pl.from_arrow(groups).filter(pl.col("bet") == "banker").height == buckets.n_unique() \
        <= BUCKETS * (GRID // 4 + 1) < banker.select((pl.col("unseen_cards") - 1) // 26, "ev").n_unique() / 2


@pytest.mark.parametrize("engine", ["duckdb", "polars"])
def test_groups_merged_from_two_ranges_give_the_marts_of_the_whole(round_evs, engine):
    groups, depth = (duckdb_groups, duckdb_depth) if engine == "duckdb" else (polars_groups, polars_depth)
    ranges = [round_evs.slice(0, ROUNDS // 2), round_evs.slice(ROUNDS // 2, ROUNDS // 2), round_evs.slice(ROUNDS)]
    merged = merge(COMPOSITION_MERGED["ev_groups"], [groups(part) for part in ranges])
    assert_rows_close(depth(merged), reference(round_evs), exact=PERCENTILES)
