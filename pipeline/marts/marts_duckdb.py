"""The marts in DuckDB: the SQL in pipeline/marts/sql, run over one committed run."""

import pyarrow as pa

from pipeline.marts.inputs import MARTS, RunInput
from pipeline.marts.roads_duckdb import build_roads, road_cells, sql

PREPARED = ("shoe_totals", "blocks", "round_groups", "round_histogram", "session_histogram")


def _quoted(path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def rounds_views(run: RunInput) -> list[str]:
    """`rounds`: the run's rounds with run_row, each round's place in the run from 0 (the
    files are in shoe order and the runs row counts their rows, so no window or join is
    needed); `opening`: the same for the first files only, enough for the first 100 rounds."""
    parts, opening, offset = [], [], 0
    for entry, path in zip(run.record.files_of("rounds"), run.files("rounds")):
        parts.append(f"SELECT {offset} + file_row_number AS run_row, * EXCLUDE (file_row_number) "
                     f"FROM read_parquet({_quoted(path)}, file_row_number = true, "
                     "hive_partitioning = false)")
        if offset < 100:
            opening.append(parts[-1])
        offset += entry.rows
    return ["CREATE VIEW rounds AS " + " UNION ALL ".join(parts),
            "CREATE VIEW opening AS " + " UNION ALL ".join(opening)]


def parquet_scan(paths: list[str]) -> str:
    """read_parquet over files of a run, without the partition columns of their folders."""
    return f"read_parquet([{', '.join(_quoted(path) for path in paths)}], hive_partitioning = false)"


def shoes_view(run: RunInput) -> str:
    return f"CREATE VIEW shoes AS SELECT * FROM {parquet_scan(run.files('shoes'))}"


def build_marts(run: RunInput, road_cells_shoes: int, road_stats_shoes: int) -> dict[str, pa.Table]:
    """Every mart of one run, as Arrow tables (before the contract's run_id and rules columns).
    Roads are drawn cell by cell for the first `road_cells_shoes` shoes; the road statistics
    (colours, column lengths, patterns) cover the first `road_stats_shoes` (0: every shoe)."""
    con = run.out.duckdb_connection()
    con.execute("SET preserve_insertion_order = false")  # every mart says its order; run_row is explicit
    for view in rounds_views(run):
        con.execute(view)
    con.execute(shoes_view(run))
    for name in ("exact_outcomes", "exact_bets", "checkpoints"):
        con.register(name, getattr(run, name)())
    con.execute(f"CREATE TEMP VIEW outcomes AS SELECT shoe_id, round, outcome FROM rounds WHERE shoe_id < {int(road_cells_shoes)}")
    build_roads(con, grid=True)
    tables = {"road_cells": road_cells(con)}
    sample = f"WHERE shoe_id < {int(road_stats_shoes)}" if road_stats_shoes else ""
    con.execute(f"CREATE OR REPLACE TEMP VIEW outcomes AS SELECT shoe_id, round, outcome FROM rounds {sample}")
    build_roads(con, grid=False)
    for name in PREPARED:
        con.execute(f"CREATE TEMP TABLE {name} AS {sql('prep_' + name)}")
    for name in MARTS:
        if name not in tables:
            tables[name] = con.sql(sql(name)).to_arrow_table()
    con.close()
    return tables
