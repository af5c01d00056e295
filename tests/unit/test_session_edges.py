"""Sessions of 100 and 1,000 rounds and the nets before each checkpoint, sent as partials by ranges whose
edges cut across sessions of both sizes: merged (pipeline/marts/partials.py), they are those of one range
over the whole run, by the SQL of pipeline/marts/sql and by the Polars queries alike."""

from decimal import Decimal

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa
import pytest

from pipeline.marts import marts_polars, partials_polars
from pipeline.marts.partials import MERGED, merge
from pipeline.marts.roads_duckdb import sql

ROUNDS, SHOE_ROUNDS = 2_537, 80  # the last shoe holds 57 rounds; the last 100- and 1,000-round sessions are short
# Shoes of each range: the edges lie at rounds 240 and 1,360, inside a 100-round and a 1,000-round session.
RANGES = [(0, 3), (3, 17), (17, 32)]
CHECKPOINTS = pa.table({"rounds": pa.array([1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, ROUNDS], pa.int64())})
PARTIALS = ("sessions", "session_edges", "running_nets")
NET = pa.decimal128(18, 2)


def run_rounds() -> pa.Table:
    rng = np.random.default_rng(11)
    banker = rng.choice(["-1.00", "0.95", "0.00"], ROUNDS, p=[0.45, 0.45, 0.10])
    tie = np.where(banker == "0.00", "8.00", "-1.00")
    rows = np.arange(ROUNDS)
    return pa.table({"run_row": pa.array(rows, pa.int64()), "shoe_id": pa.array(rows // SHOE_ROUNDS, pa.int64()),
                     "net_banker": pa.array([Decimal(n) for n in banker], NET),
                     "net_tie": pa.array([Decimal(n) for n in tie], NET)})


def shoes_of(rounds: pa.Table) -> pa.Table:
    return duckdb.sql("SELECT shoe_id, sum(COLUMNS('^net_')) FROM rounds GROUP BY shoe_id").to_arrow_table()


def in_range(rounds: pa.Table, first: int, last: int) -> pa.Table:
    return pl.from_arrow(rounds).filter(pl.col("shoe_id").is_between(first, last - 1)).to_arrow()


def duckdb_partials(rounds: pa.Table) -> dict[str, pa.Table]:
    with duckdb.connect() as con:
        for name, table in (("rounds", rounds), ("shoes", shoes_of(rounds)), ("checkpoints", CHECKPOINTS)):
            con.register(name, table)
        con.execute(f"CREATE TEMP TABLE blocks AS {sql('prep_blocks')}")
        return {name: con.sql(sql("prep_" + name)).to_arrow_table() for name in PARTIALS}


def duckdb_finals(merged: dict[str, pa.Table], round_histogram: pa.Table) -> tuple[list, list]:
    with duckdb.connect() as con:
        for name, table in merged.items():
            con.register(name, table)
        con.register("round_histogram", round_histogram)
        return con.sql(sql("prep_session_histogram")).fetchall(), con.sql("FROM running_nets").fetchall()


def polars_partials(rounds: pa.Table) -> dict[str, pa.Table]:
    frame, nets = pl.from_arrow(rounds).lazy(), ["net_banker", "net_tie"]
    blocks = partials_polars.blocks(frame, nets).collect().lazy()
    queries = {"sessions": partials_polars.sessions(pl.from_arrow(shoes_of(rounds)).lazy(), blocks, nets),
               "session_edges": partials_polars.session_edges(blocks, nets),
               "running_nets": partials_polars.running_nets(blocks, pl.from_arrow(CHECKPOINTS).lazy(), nets)}
    return {name: query.collect().to_arrow() for name, query in queries.items()}


def polars_finals(merged: dict[str, pa.Table], round_histogram: pa.Table) -> tuple[list, list]:
    frames = {name: pl.from_arrow(table).lazy() for name, table in merged.items()}
    histogram = marts_polars.session_histogram(pl.from_arrow(round_histogram).lazy(), frames["sessions"],
                                               frames["session_edges"], ["net_banker", "net_tie"])
    return histogram.collect().rows(), frames["running_nets"].collect().rows()


@pytest.mark.parametrize(("partials_of", "finals"),
                         [(duckdb_partials, duckdb_finals), (polars_partials, polars_finals)], ids=["duckdb", "polars"])
def test_sessions_across_range_edges_merge_to_those_of_one_range(partials_of, finals):
    rounds = run_rounds()
    round_histogram = duckdb.sql("SELECT COLUMNS('^net_'), count(*) AS weight FROM rounds GROUP BY ALL")
    round_histogram = round_histogram.to_arrow_table()
    ranges = [partials_of(in_range(rounds, first, last)) for first, last in RANGES]
    merged = {name: merge(MERGED[name], [result[name] for result in ranges]) for name in PARTIALS}
    histogram, running = (sorted(rows) for rows in finals(merged, round_histogram))
    one_range = finals(partials_of(rounds), round_histogram)
    assert (histogram, running) == tuple(sorted(rows) for rows in one_range)
    edges = pl.from_arrow(merged["session_edges"])
    assert sorted(edges.filter(size=100, rounds=100)["block"].to_list()) == [2, 13]  # across rounds 240, 1,360
    assert sorted(edges.filter(size=1000, rounds=1000)["block"].to_list()) == [0, 1]
    sessions = {horizon: sum(row[3] for row in histogram if row[:2] == (horizon, "banker"))
                for horizon in ("round", "shoe", "session_100", "session_1000")}
    assert sessions == {"round": ROUNDS, "shoe": 32, "session_100": ROUNDS // 100, "session_1000": ROUNDS // 1000}
    nets = rounds["net_banker"].to_pylist()
    expected = {n: sum(nets[:n], Decimal(0)) for n in (100, 200, 500, 1000, 2000, ROUNDS)}
    assert {row[0]: row[2] for row in running} == expected
    assert all(row[1] == row[0] for row in running)  # every round before each checkpoint counted once
