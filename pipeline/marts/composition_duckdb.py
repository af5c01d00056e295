"""The composition marts in DuckDB: the SQL in pipeline/marts/sql, as partials over a range of a run's
shoes (prep_ev_groups, prep_perfect_bets, prep_count_levels, from its round_ev rows and rounds) and the
final queries over the merged partials (pipeline/marts/partials.py)."""

import duckdb
import pyarrow as pa

from pipeline.marts.inputs import COMPOSITION_MARTS, RunInput
from pipeline.marts.range_views import files_relation, range_connection
from pipeline.marts.partials import COMPOSITION_MERGED, Family, ShoeRange, composition_family
from pipeline.marts.roads_duckdb import sql


def range_partials(con: duckdb.DuckDBPyConnection) -> dict[str, pa.Table]:
    """From relations `round_ev` (one row per round: shoe_id, round, unseen_cards, ev_<bet>,
    true_count_<system>) and `rounds` (shoe_id, round, net_<bet>) of whole shoes, the composition
    partials as Arrow tables."""
    con.execute(f"CREATE OR REPLACE TEMP VIEW round_evs AS {sql('prep_round_evs')}")
    return {name: con.sql(sql("prep_" + name)).to_arrow_table() for name in COMPOSITION_MERGED}


def finals(merged: dict[str, pa.Table]) -> dict[str, pa.Table]:
    """The composition marts from their merged partials, as Arrow tables (before the contract's run_id
    and rules columns)."""
    with duckdb.connect() as con:
        con.execute("SET preserve_insertion_order = false")  # every mart says its order
        for name, table in merged.items():
            con.register(name, table)
        con.execute(f"CREATE TEMP TABLE perfect_play AS {sql('perfect_play')}")  # count_efficiency reads it
        queries = {name: sql(name) for name in COMPOSITION_MARTS} | {"perfect_play": "SELECT * FROM perfect_play"}
        return {name: con.sql(queries[name]).to_arrow_table() for name in COMPOSITION_MARTS}


def composition_marts(con: duckdb.DuckDBPyConnection) -> dict[str, pa.Table]:
    """The composition marts of relations `round_ev` and `rounds` (as range_partials takes them)."""
    return finals(range_partials(con))


def partials(run: RunInput, shoes: ShoeRange, round_ev: tuple[str, ...]) -> dict[str, pa.Table]:
    """The composition partials of one range of a run's shoes, from its round_ev files and its rounds."""
    with range_connection(run.out, shoes) as con:
        files_relation(con, "round_ev", list(round_ev), shoes)
        files_relation(con, "rounds", [file.path for file in shoes.rounds], shoes,
                   "shoe_id, round, COLUMNS('^net_')")
        return range_partials(con)


def family(run: RunInput) -> Family:
    """The composition marts of one run, by ranges of its shoes, from its round_ev files and its rounds."""
    return composition_family(partials, finals, run)
