"""Reading the published warehouse. `open_warehouse` is the one way it is opened for readers:
`baccarat sql`, the report, and BI tools through the `duckdb+baccarat` SQLAlchemy dialect
(pipeline.marts.bi). It imports DuckDB alone, so a BI server needs nothing else of the pipeline."""

import re
from pathlib import Path

import duckdb

from pipeline.errors import BaccaratError

_QUOTED_PARQUET = re.compile(r"'((?:[^']|'')*\.parquet)'")
# EXPLAIN, its ANALYZE or its options, then the statement it explains (which ANALYZE runs)
_EXPLAINED = re.compile(r"\s*EXPLAIN\s+(?:ANALY[SZ]E\s+)?(?:\([^()]*\)\s*)?(.*)", re.IGNORECASE | re.DOTALL)


def sql_string(text: str) -> str:
    """A DuckDB string literal."""
    return "'" + text.replace("'", "''") + "'"


def sql_list(texts: list[str]) -> str:
    """A DuckDB list literal of strings."""
    return "[" + ", ".join(map(sql_string, texts)) + "]"


def open_warehouse(path: Path) -> duckdb.DuckDBPyConnection:
    """The published warehouse for readers: read-only, reading no file but those its views name, with
    no extension to install or load and its settings locked; or a one-line error. Run readers' SQL
    through `refuse_all_but_queries`: these settings alone let COPY write over a file a view reads."""
    if not Path(path).is_file():
        raise BaccaratError(f"no warehouse at {path} (run `baccarat marts` first)")
    try:
        con = duckdb.connect(str(path), read_only=True, config={"autoinstall_known_extensions": "false",
                                                                "autoload_known_extensions": "false"})
        views = " ".join(sql for (sql,) in con.execute("SELECT sql FROM duckdb_views() WHERE NOT internal").fetchall())
        files = sorted({match.replace("''", "'") for match in _QUOTED_PARQUET.findall(views)})
        # DuckDB takes the allowed paths only once the database runs, and only while external access is on
        con.execute(f"SET allowed_paths = {sql_list(files)}")
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
    except duckdb.Error as error:
        raise BaccaratError(f"warehouse {path} cannot be opened: {str(error).strip().splitlines()[0]}") from None
    return con


def refuse_all_but_queries(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    """Raise DuckDB's PermissionException, before any of `sql` runs, unless each of its statements
    only reads: a SELECT, or an EXPLAIN of one."""
    for statement in con.extract_statements(sql):
        if not _only_reads(con, statement):
            raise duckdb.PermissionException(
                f"{statement.type.name} statements are refused: the warehouse is read-only and queries may "
                "only read (SELECT, or EXPLAIN of a SELECT)")


def _only_reads(con: duckdb.DuckDBPyConnection, statement) -> bool:
    if statement.type.name == "SELECT":
        return True
    explained = _EXPLAINED.fullmatch(statement.query) if statement.type.name == "EXPLAIN" else None
    inner = con.extract_statements(explained.group(1)) if explained else []
    return bool(inner) and all(s.type.name == "SELECT" for s in inner)


def read_query(con: duckdb.DuckDBPyConnection, sql: str) -> duckdb.DuckDBPyRelation | None:
    """Run a reader's SQL on the warehouse: queries only; any other statement is refused before
    anything runs."""
    try:
        refuse_all_but_queries(con, sql)
        return con.sql(sql)
    except duckdb.Error as error:
        raise BaccaratError(error_with_hint(error)) from None


def error_with_hint(error: duckdb.Error) -> str:
    """DuckDB's first line, and its hint ("Did you mean ...", "Candidate bindings: ...") on the same line."""
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    hints = [line for line in lines[1:] if line.startswith(("Did you mean", "Candidate bindings"))]
    return " ".join(lines[:1] + hints)
