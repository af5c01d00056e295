"""The marts in DuckDB: the SQL in pipeline/marts/sql, run over one committed run."""

import duckdb
import pyarrow as pa

from pipeline.marts.inputs import MARTS, RunInput
from pipeline.marts.roads_duckdb import build_roads, road_cells, sql

PREPARED = ("shoe_totals", "offsets", "blocks", "round_histogram", "session_histogram", "streak_list")


def _quoted(paths) -> str:
    return "[" + ", ".join("'" + str(p).replace("'", "''") + "'" for p in paths) + "]"


def build_marts(run: RunInput, road_cells_shoes: int) -> dict[str, pa.Table]:
    """Every mart of one run, as Arrow tables (before the contract's run_id and rules columns)."""
    con = duckdb.connect()
    con.execute(f"CREATE VIEW rounds AS SELECT * FROM read_parquet({_quoted(run.files('rounds'))}, hive_partitioning = false)")
    for name in ("exact_outcomes", "exact_bets", "checkpoints"):
        con.register(name, getattr(run, name)())
    con.execute(f"CREATE TEMP VIEW outcomes AS SELECT shoe_id, round, outcome FROM rounds WHERE shoe_id < {int(road_cells_shoes)}")
    build_roads(con, grid=True)
    tables = {"road_cells": road_cells(con)}
    con.execute("CREATE OR REPLACE TEMP VIEW outcomes AS SELECT shoe_id, round, outcome FROM rounds")
    build_roads(con, grid=False)
    for name in PREPARED:
        con.execute(f"CREATE TEMP TABLE {name} AS {sql('prep_' + name)}")
    for name in MARTS:
        if name not in tables:
            tables[name] = con.sql(sql(name)).to_arrow_table()
    con.close()
    return tables
