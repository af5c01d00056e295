"""The SQL prompt of `baccarat sql`: one query, or statements ending in ';' from stdin (a prompt on a
terminal, none in a pipe), each run read-only and within its bounds on the published warehouse."""

import contextlib
import sys
import threading
from collections.abc import Callable

import duckdb

from pipeline.errors import BaccaratError
from pipeline.marts.bounds import Bounds
from pipeline.marts.statements import refuse_all_but_queries
from pipeline.marts.warehouse import error_with_hint


def run_one(con: duckdb.DuckDBPyConnection, bounds: Bounds, sql: str) -> None:
    """Show what one query returns; Ctrl-C stops it (KeyboardInterrupt once it stopped)."""
    if not _has_statements(con, sql):
        raise BaccaratError(f"no statement to run in {sql!r} (an option of `baccarat sql`? see --help)")
    _run(con, bounds, sql)


def _run(con: duckdb.DuckDBPyConnection, bounds: Bounds, sql: str) -> None:
    """Show what `sql` returns, on a cursor of its own: a statement interrupted as it starts can leave
    its connection busy for good (DuckDB 2.0.1), and the next statement then gets a fresh one."""
    cursor = con.cursor()
    try:
        _interruptible(cursor, lambda: _show_query(cursor, bounds, sql))
    finally:
        with contextlib.suppress(duckdb.Error):
            cursor.close()


def _has_statements(con: duckdb.DuckDBPyConnection, sql: str) -> bool:
    try:
        return bool(con.extract_statements(sql))
    except duckdb.Error as error:
        raise BaccaratError(error_with_hint(error)) from None


def _show_query(con, bounds: Bounds, sql: str) -> None:
    """Refuse all but queries, then run and show it within the bounds; DuckDB's errors in one line."""
    try:
        with bounds.timed(con):
            refuse_all_but_queries(con, sql)
            _show(con.sql(sql))
        return
    except duckdb.Error as error:
        message = error_with_hint(error)
    raise BaccaratError(message)


def _show(result: duckdb.DuckDBPyRelation | None) -> None:
    if result is not None:
        result.show(max_width=200, max_rows=200)


def _interruptible(con, work: Callable[[], None]) -> None:
    """work() in a thread, so that Ctrl-C, which Python delivers to the main thread, can interrupt
    DuckDB's query (DuckDB does not reliably see it itself); KeyboardInterrupt once the query stopped."""
    outcome: dict = {}

    def run():
        try:
            work()
        except BaseException as error:  # re-raised on the main thread below
            outcome["error"] = error

    worker = threading.Thread(target=run, daemon=True)
    interrupted = False
    try:
        worker.start()
    except KeyboardInterrupt:
        interrupted = True
    while worker.is_alive():
        try:
            if interrupted:  # again and again: an interrupt before DuckDB starts the query is lost
                con.interrupt()
            worker.join(0.1)
        except KeyboardInterrupt:
            interrupted = True
    if interrupted:
        raise KeyboardInterrupt
    if "error" in outcome:
        raise outcome["error"]


LEAVE = (".quit", ".exit", "\\q")  # anywhere; "exit" and "quit" only where a statement would start
TABLES = "SELECT table_name FROM information_schema.tables ORDER BY 1"


def prompt(con: duckdb.DuckDBPyConnection, bounds: Bounds) -> int:
    """Statements ending in ';' from stdin; a prompt on a terminal, none in a pipe. Exit status 1 if
    a statement failed in a pipe (a script), 0 otherwise; .quit, \\q, exit or end of input leaves.
    On a terminal Ctrl-C cancels the running statement, or the one being typed; nothing is saved."""
    interactive = sys.stdin.isatty()
    if interactive:
        import readline  # noqa: F401  (input() gets line editing and this session's history; no file)

        print("warehouse.duckdb (read-only): tables " + ", ".join(name for (name,) in con.execute(TABLES).fetchall())
              + ".\nEnd statements with ';'. .tables, .schema [TABLE]; Ctrl-C cancels; leave with .quit, \\q or exit")
    failed, lines = False, []
    while True:
        try:
            line = input("baccarat> " if not lines else "     ...> ") if interactive else sys.stdin.readline()
        except EOFError:
            break
        except KeyboardInterrupt:
            if not interactive:
                raise
            print()  # the line typed so far goes, and the statement it continued
            lines = []
            continue
        if not interactive and not line:
            break
        command = line.strip().removesuffix(";").strip()
        if command in LEAVE or (not lines and command in ("exit", "quit")):
            break
        if not lines and command.startswith("."):
            failed |= not _dot_command(con, command)
            continue
        lines.append(line.rstrip("\n"))
        statement = "\n".join(lines).strip()
        if statement.endswith(";"):
            lines = []
            failed |= not _run_statement(con, bounds, statement, interactive)
    return int(failed and not interactive)


def _run_statement(con, bounds: Bounds, statement: str, interactive: bool) -> bool:
    """False if the statement failed; Ctrl-C at the prompt stops it and the prompt goes on."""
    try:
        _run(con, bounds, statement)
    except BaccaratError as error:
        print(f"error: {error}", file=sys.stderr)
        return False
    except KeyboardInterrupt:
        if not interactive:
            raise
        print("interrupted", file=sys.stderr)
    return True


def _dot_command(con, command: str) -> bool:
    """.tables or .schema [TABLE]; False (with a message) for anything else."""
    name, *arguments = command.split()
    if name == ".tables" and not arguments:
        for (table,) in con.execute(TABLES).fetchall():
            print(table)
        return True
    if name == ".schema" and len(arguments) <= 1:
        columns = con.sql("SELECT table_name, column_name, data_type FROM information_schema.columns "
                          "WHERE table_name = coalesce($name, table_name) ORDER BY table_name, ordinal_position",
                          params={"name": arguments[0] if arguments else None})
        if not columns.limit(1).fetchall():
            print(f"error: no table {arguments[0]!r} (.tables lists them)", file=sys.stderr)
            return False
        columns.show(max_width=200, max_rows=100_000)
        return True
    print(f"error: unknown command {command!r}: .tables, .schema [TABLE] or .quit", file=sys.stderr)
    return False
