"""The betting-system marts in DuckDB: the SQL in pipeline/marts/sql over a run's sessions rows."""

import duckdb
import pyarrow as pa

from pipeline.marts.inputs import SYSTEM_MARTS, RunInput, rated_endings
from pipeline.marts.range_views import parquet_scan
from pipeline.marts.roads_duckdb import sql


def system_marts(con: duckdb.DuckDBPyConnection) -> dict[str, pa.Table]:
    """From relations `sessions` (the sessions contract), `system_terms` (RunInput.system_terms) and
    `endings` (rated_endings) of one run, the system marts as Arrow tables (before the contract's run_id
    and rules columns)."""
    return {name: con.sql(sql(name)).to_arrow_table() for name in SYSTEM_MARTS}


def build_system_marts(run: RunInput, sessions: list[str]) -> dict[str, pa.Table]:
    """The system marts of one run from its sessions files."""
    with run.out.duckdb_connection() as con:
        con.execute("SET preserve_insertion_order = false")  # every mart says its order
        con.execute(f"CREATE VIEW sessions AS SELECT * FROM {parquet_scan(sessions)}")
        names = [name for (name,) in con.execute("SELECT DISTINCT system FROM sessions ORDER BY system").fetchall()]
        con.register("system_terms", run.system_terms(names))
        con.register("endings", rated_endings())
        return system_marts(con)
