"""The composition marts in DuckDB: the SQL in pipeline/marts/sql over a run's round_ev rows and rounds."""

import duckdb
import pyarrow as pa

from pipeline.marts.inputs import COMPOSITION_MARTS, RunInput
from pipeline.marts.marts_duckdb import parquet_scan
from pipeline.marts.roads_duckdb import sql


def composition_marts(con: duckdb.DuckDBPyConnection) -> dict[str, pa.Table]:
    """From relations `round_ev` (one row per round: shoe_id, round, unseen_cards, ev_<bet>,
    true_count_<system>) and `rounds` (shoe_id, round, net_<bet>) of one run, the composition marts
    as Arrow tables (before the contract's run_id and rules columns)."""
    con.execute(f"CREATE OR REPLACE TEMP VIEW round_evs AS {sql('prep_round_evs')}")
    con.execute(f"CREATE OR REPLACE TEMP TABLE perfect_play AS {sql('perfect_play')}")  # count_efficiency reads it
    queries = {name: sql(name) for name in COMPOSITION_MARTS} | {"perfect_play": "SELECT * FROM perfect_play"}
    return {name: con.sql(queries[name]).to_arrow_table() for name in COMPOSITION_MARTS}


def build_composition_marts(run: RunInput, round_ev: list[str]) -> dict[str, pa.Table]:
    """The composition marts of one run from its round_ev files and its rounds."""
    with run.out.duckdb_connection() as con:
        con.execute("SET preserve_insertion_order = false")  # every mart says its order
        con.execute(f"CREATE VIEW round_ev AS SELECT * FROM {parquet_scan(round_ev)}")
        con.execute(f"CREATE VIEW rounds AS SELECT * FROM {parquet_scan(run.files('rounds'))}")
        return composition_marts(con)
