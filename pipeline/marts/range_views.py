"""A range of a run's shoes as DuckDB relations over its committed files. On a local OUT, views that
DuckDB's own Parquet reader scans for each query; on an object store, temporary tables filled by one
read of each file through a pyarrow dataset on OUT's filesystem (DuckDB pushes the projection and the
shoe filter into pyarrow's scan and gets Arrow batches), so that the range's queries fetch no object
twice, no DuckDB extension is needed and no byte passes through Python. docs/marts-and-roads.md,
"On a cluster"."""

import duckdb

from pipeline.marts.partials import OPENING_ROUNDS, RangeFile, ShoeRange
from pipeline.marts.warehouse import sql_list, sql_string
from pipeline.storage import Store


# The rounds columns the partials read (sql/prep_*.sql, the opening and the road outcomes).
ROUND_COLUMNS = "r.shoe_id, r.round, r.outcome, r.streak_index, COLUMNS('^net_')"


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


def files_relation(con: duckdb.DuckDBPyConnection, out: Store, name: str, paths: list[str], shoes: ShoeRange,
               columns: str = "*") -> None:
    """Relation `name`: `columns` of the Parquet files at `paths` (reader paths under OUT) for the range's
    shoes; a view on a local OUT, a table read once on an object store."""
    if out.is_local:
        con.execute(f"CREATE VIEW {name} AS SELECT {columns} FROM {parquet_scan(paths)} WHERE {_in_range(shoes)}")
        return
    con.register(f"{name}_files", out.parquet_dataset(paths))
    con.execute(f"CREATE TEMP TABLE {name} AS SELECT {columns} FROM {name}_files WHERE {_in_range(shoes)}")
    con.unregister(f"{name}_files")


def rounds_views(con: duckdb.DuckDBPyConnection, out: Store, shoes: ShoeRange) -> None:
    """Relations of the range: `shoes`; `rounds`, each with its run_row (its place in the run, from 0); and
    `opening`, the run_row and nets of the range's rounds among the run's first 100."""
    if out.is_local:
        con.execute(f"CREATE VIEW shoes AS {_local_scan(shoes.shoes, shoes, run_row=False)}")
        con.execute(f"CREATE VIEW rounds AS {_local_scan(shoes.rounds, shoes, run_row=True)}")
        opening = shoes.opening()
        source = f"({_local_scan(opening, shoes, run_row=True)})" if opening else "(FROM rounds LIMIT 0)"
        con.execute(f"CREATE VIEW opening AS SELECT run_row, COLUMNS('^net_') FROM {source} "
                    f"WHERE run_row < {OPENING_ROUNDS}")
        return
    files_relation(con, out, "shoes", [file.path for file in shoes.shoes], shoes)
    _shoe_starts(con, out, shoes)
    con.register("range_rounds", out.parquet_dataset([file.path for file in shoes.rounds]))
    con.execute(f"CREATE TEMP TABLE rounds AS SELECT s.start + r.round - 1 AS run_row, {ROUND_COLUMNS} "
                f"FROM (FROM range_rounds WHERE {_in_range(shoes)}) AS r "
                "JOIN shoe_starts AS s ON s.shoe_id = r.shoe_id")
    con.unregister("range_rounds")
    [(last_opening,)] = con.execute(f"SELECT max(shoe_id) FROM shoe_starts WHERE start < {OPENING_ROUNDS}").fetchall()
    opening = f"shoe_id <= {last_opening}" if last_opening is not None else "false"
    con.execute(f"CREATE VIEW opening AS SELECT run_row, COLUMNS('^net_') FROM rounds "
                f"WHERE {opening} AND run_row < {OPENING_ROUNDS}")


def _shoe_starts(con: duckdb.DuckDBPyConnection, out: Store, shoes: ShoeRange) -> None:
    """Table shoe_starts: the run_row of each shoe's first round, from the rounds of the shoes before it
    (the range's first rounds file starts at its offset; the shoes rows count each shoe's rounds)."""
    first = shoes.rounds[0]
    before = 0
    if not first.whole:
        con.register("first_rounds", out.parquet_dataset([first.path]))
        [(before,)] = con.execute(f"SELECT count(*) FROM first_rounds WHERE shoe_id < {shoes.first}").fetchall()
    con.execute(f"CREATE TEMP TABLE shoe_starts AS SELECT shoe_id, ({first.offset + before} "
                "+ sum(rounds) OVER (ORDER BY shoe_id ROWS UNBOUNDED PRECEDING) - rounds)::BIGINT AS start FROM shoes")
