"""The marts in DuckDB: the SQL in pipeline/marts/sql, as partials over a range of a run's shoes
(sums and histograms bounded by the run's distinct values, the blocks across the range's edges, the
opening and road outcomes; shoe_summary written by the range) and the final
queries over the merged partials (pipeline/marts/partials.py)."""

import pyarrow as pa

from pipeline.marts.inputs import MARTS, RunInput
from pipeline.marts.partials import Family, ShoeRange, marts_family
from pipeline.marts.publish import PER_SHOE_MARTS, write_part
from pipeline.marts.range_views import range_connection, rounds_views
from pipeline.marts.roads_duckdb import build_road_statistics, build_roads, road_cells, sql

RANGE_PARTIALS = ("outcome_totals", "longest_counts", "sessions", "session_edges", "running_nets", "round_groups")
ROAD_PARTIALS = ("road_shoes", "road_marks", "road_columns", "road_conditions")  # over the roads of a range
PLACED = ", big_road_column, streak_index"  # each round's place on the big road (road_big_road_placed.sql)
FINAL_PREPARED = ("round_histogram", "session_histogram")  # prep_*.sql over the merged partials


def partials(run: RunInput, shoes: ShoeRange, road_cells_shoes: int, road_stats_shoes: int) -> dict[str, pa.Table]:
    """The partials of one range of a run's shoes (pipeline/marts/partials.py), as Arrow tables (prep_*.sql
    over its rounds, its shoes, its blocks of 100 and 1,000 rounds and the roads of its shoes among the
    first `road_stats_shoes`, 0: every shoe); the outcomes of its shoes among the first `road_cells_shoes`;
    writes its file of each mart of PER_SHOE_MARTS."""
    con = range_connection(run.out, shoes)
    rounds_views(con, shoes)
    con.register("checkpoints", run.checkpoints())
    con.execute(f"CREATE TEMP TABLE blocks AS {sql('prep_blocks')}")
    tables = {name: con.sql(sql("prep_" + name)).to_arrow_table() for name in RANGE_PARTIALS
              if name not in run.counted_partials}
    tables["opening"] = con.sql("FROM opening").to_arrow_table()
    tables["road_outcomes"] = con.sql(f"FROM ({_outcomes(road_cells_shoes)})").to_arrow_table()
    con.execute(f"CREATE TEMP VIEW outcomes AS {_outcomes(road_stats_shoes, PLACED)}")
    build_road_statistics(con)
    tables |= {name: con.sql(sql("prep_" + name)).to_arrow_table() for name in ROAD_PARTIALS}
    for name in PER_SHOE_MARTS:
        tables[name] = write_part(run, name, con.sql(sql(name)).to_arrow_table(), shoes.file_name())
    con.close()
    return tables


def _outcomes(first_shoes: int, columns: str = "") -> str:
    """The outcomes of the range's shoes among the run's first `first_shoes` (0: every shoe), with `columns`."""
    where = f" WHERE shoe_id < {int(first_shoes)}" if first_shoes else ""
    return f"SELECT shoe_id, round, outcome{columns} FROM rounds{where}"


def finals(run: RunInput, merged: dict[str, pa.Table]) -> dict[str, pa.Table]:
    """Every mart of one run but those its range tasks wrote (PER_SHOE_MARTS) from its merged partials,
    as Arrow tables (before the contract's run_id and rules columns); road_cells from the road outcomes."""
    con = run.out.duckdb_connection()
    con.execute("SET preserve_insertion_order = false")  # every mart says its order; run_row is explicit
    for name, table in merged.items():
        con.register(name, table)
    for name in ("exact_outcomes", "exact_bets", "checkpoints"):
        con.register(name, getattr(run, name)())
    con.execute("CREATE TEMP VIEW outcomes AS FROM road_outcomes")
    build_roads(con)
    tables = {"road_cells": road_cells(con)}
    for name in FINAL_PREPARED:
        con.execute(f"CREATE TEMP TABLE {name} AS {sql('prep_' + name)}")
    for name in MARTS:
        if name not in tables and name not in PER_SHOE_MARTS:
            tables[name] = con.sql(sql(name)).to_arrow_table()
    con.close()
    return tables


def family(run: RunInput, road_cells_shoes: int, road_stats_shoes: int) -> Family:
    """Every mart of one run, by ranges of its shoes (see finals); shoe_summary as the files its range
    tasks write."""
    return marts_family(partials, finals, run, road_cells_shoes, road_stats_shoes)
