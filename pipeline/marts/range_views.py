"""A range of a run's shoes as DuckDB views over its files, which DuckDB's own Parquet reader scans for
each query. The files are local: on an object store the range's task reads copies fetched into a local
folder (pipeline/marts/partials.py, local_range). docs/marts-and-roads.md, "On a cluster"."""

import duckdb

from pipeline.marts.partials import OPENING_ROUNDS, RangeFile, ShoeRange
from pipeline.marts.warehouse import sql_list, sql_string
from pipeline.storage import Store


def range_connection(out: Store, shoes: ShoeRange) -> duckdb.DuckDBPyConnection:
    """A connection for the range's partials, on the threads the range may use."""
    con = out.duckdb_connection()
    con.execute("SET preserve_insertion_order = false")  # every mart says its order; run_row is explicit
    if shoes.threads:
        con.execute(f"SET threads = {int(shoes.threads)}")
    return con


def _in_range(shoes: ShoeRange) -> str:
    return f"shoe_id >= {shoes.first} AND shoe_id < {shoes.last}"


def parquet_scan(paths: list[str]) -> str:
    """read_parquet over files of a run on a local OUT, without the partition columns of their folders."""
    return f"read_parquet({sql_list([str(path) for path in paths])}, hive_partitioning = false)"


def _local_scan(files: tuple[RangeFile, ...], shoes: ShoeRange, run_row: bool) -> str:
    """The rows of local `files` for the range's shoes; with run_row, each round's place in the run from 0
    (the files are in shoe order and the runs row counts their rows, so no window or join is needed)."""
    parts = []
    for file in files:
        columns = f"{file.offset} + file_row_number AS run_row, * EXCLUDE (file_row_number)" if run_row else "*"
        where = "" if file.whole else f" WHERE {_in_range(shoes)}"
        parts.append(f"SELECT {columns} FROM read_parquet({sql_string(str(file.path))}, file_row_number = {run_row}, "
                     f"hive_partitioning = false){where}")
    return " UNION ALL ".join(parts)


def files_relation(con: duckdb.DuckDBPyConnection, name: str, paths: list[str], shoes: ShoeRange,
                   columns: str = "*") -> None:
    """View `name`: `columns` of the Parquet files at `paths` for the range's shoes."""
    con.execute(f"CREATE VIEW {name} AS SELECT {columns} FROM {parquet_scan(paths)} WHERE {_in_range(shoes)}")


def rounds_views(con: duckdb.DuckDBPyConnection, shoes: ShoeRange) -> None:
    """Views of the range: `shoes`; `rounds`, each with its run_row (its place in the run, from 0); and
    `opening`, the run_row and nets of the range's rounds among the run's first 100."""
    con.execute(f"CREATE VIEW shoes AS {_local_scan(shoes.shoes, shoes, run_row=False)}")
    con.execute(f"CREATE VIEW rounds AS {_local_scan(shoes.rounds, shoes, run_row=True)}")
    opening = shoes.opening()
    source = f"({_local_scan(opening, shoes, run_row=True)})" if opening else "(FROM rounds LIMIT 0)"
    con.execute(f"CREATE VIEW opening AS SELECT run_row, COLUMNS('^net_') FROM {source} "
                f"WHERE run_row < {OPENING_ROUNDS}")
