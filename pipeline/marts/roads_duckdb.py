"""The five roads in DuckDB SQL (pipeline/marts/sql/road_*.sql), for any table of outcomes."""

from importlib.resources import files

import duckdb
import pyarrow as pa

ROADS = ("bead_plate", "big_road", "big_eye_boy", "small_road", "cockroach_pig")
DERIVED_ROADS = ROADS[2:]


def sql(name: str) -> str:
    return files("pipeline.marts").joinpath("sql", f"{name}.sql").read_text(encoding="utf-8")


def build_roads(con: duckdb.DuckDBPyConnection) -> None:
    """From a relation `outcomes(shoe_id, round, outcome)`, create temp tables: big_road and derived
    (logical columns and rows), bead_plate and the drawing position of every big-road and derived-road
    entry (road_grid)."""
    con.execute(f"CREATE OR REPLACE TEMP VIEW marks AS {sql('road_big_road')}")
    con.execute(f"CREATE OR REPLACE TEMP TABLE big_road AS {sql('road_logical')}")
    con.execute(f"CREATE OR REPLACE TEMP VIEW marks AS {sql('road_derived')}")
    con.execute(f"CREATE OR REPLACE TEMP TABLE derived AS {sql('road_logical')}")
    con.execute(f"CREATE OR REPLACE TEMP TABLE bead_plate AS {sql('road_bead_plate')}")
    con.execute("""CREATE OR REPLACE TEMP VIEW logical AS
                   SELECT road, shoe_id, seq, col, row FROM big_road
                   UNION ALL SELECT road, shoe_id, seq, col, row FROM derived""")
    con.execute(f"CREATE OR REPLACE TEMP TABLE road_grid AS {sql('road_grid')}")


def build_road_statistics(con: duckdb.DuckDBPyConnection) -> None:
    """From a relation `outcomes(shoe_id, round, outcome, big_road_column, streak_index)` (rounds, which
    carry their place on the big road), create temp tables big_road (road_big_road_placed.sql) and
    derived, the derived roads' marks: all the road statistics (prep_road_*.sql) count."""
    con.execute(f"CREATE OR REPLACE TEMP TABLE big_road AS {sql('road_big_road_placed')}")
    con.execute(f"CREATE OR REPLACE TEMP TABLE derived AS {sql('road_derived')}")


def road_cells(con: duckdb.DuckDBPyConnection) -> pa.Table:
    """Every cell of the five roads (after build_roads), in a fixed order."""
    order = " ".join(f"WHEN '{road}' THEN {i}" for i, road in enumerate(ROADS))
    return con.sql(f"""
        SELECT road, shoe_id, seq, seq // 6 AS col, seq % 6 AS row, seq // 6 AS draw_col,
               seq % 6 AS draw_row, mark, 0 AS ties
        FROM bead_plate
        UNION ALL
        SELECT l.road, l.shoe_id, l.seq, l.col, l.row, g.draw_col, g.draw_row, l.mark,
               coalesce(l.ties, 0) AS ties
        FROM (SELECT road, shoe_id, seq, col, row, mark, ties FROM big_road
              UNION ALL SELECT road, shoe_id, seq, col, row, mark, NULL FROM derived) AS l
        JOIN road_grid AS g USING (road, shoe_id, seq)
        ORDER BY shoe_id, CASE road {order} END, seq
    """).to_arrow_table()
