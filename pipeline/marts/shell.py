"""The SQL prompt of `baccarat sql`: one query, or statements ending in ';' from stdin (a prompt on a
terminal, none in a pipe), each run read-only and within its bounds on the published warehouse."""

import contextlib
import csv
import io
import itertools
import os
import resource
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import NoReturn

import duckdb

from pipeline.errors import BaccaratError, PipelineError, WorldFailure
from pipeline.marts.bounds import Bounds
from pipeline.marts.statements import each_statement, ends_a_statement, refuse_all_but_queries
from pipeline.marts.warehouse import damaged_file_hint, error_with_hint, failed_on_the_data
from pipeline.termination import stop_status, stop_word, terminated

ROWS_PER_FETCH = 10_000
# Once interrupted, DuckDB stops a query between vectors of rows, but one call of a function over a huge
# value (repeat('x', 4000000000)) runs on to its end, a minute or more: past this, the command ends without it.
STOPPING_SECONDS = 5
STUCK = "it ran on inside one call of a function, which DuckDB cannot interrupt, so the command ended without it"
# What this process may allocate beyond DuckDB's memory limit once the warehouse is open: the result's
# chunks as Arrow and Python values (ROWS_PER_FETCH rows at a time), and what DuckDB's limit leaves out.
HEADROOM_BYTES = 512 * 2**20


@contextlib.contextmanager
def memory_capped(bounds: Bounds) -> Iterator[None]:
    """Within, this process's data (RLIMIT_DATA) may grow by DuckDB's memory limit and HEADROOM_BYTES at
    most. DuckDB's limit counts what its buffer manager hands out, not one huge value, which took 7.9 GB
    under the 2 GB default; capped, that allocation fails as DuckDB's out-of-memory error. Where the
    kernel does not say what the process holds (no /proc: not Linux), nothing is capped."""
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    held = _data_bytes()
    cap = None if held is None else held + bounds.memory_limit + HEADROOM_BYTES
    if cap is None or (soft != resource.RLIM_INFINITY and cap >= soft):  # under soft, a cap is under hard too
        yield
        return
    resource.setrlimit(resource.RLIMIT_DATA, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))


def _data_bytes() -> int | None:
    """What this process holds as RLIMIT_DATA counts it (VmData); None where /proc does not say."""
    try:
        with open("/proc/self/status") as status:
            return next((int(line.split()[1]) * 1024 for line in status if line.startswith("VmData:")), None)
    except OSError:
        return None


def run_one(con: duckdb.DuckDBPyConnection, bounds: Bounds, sql: str) -> None:
    """Show what one query returns; Ctrl-C stops it (KeyboardInterrupt once it stopped). Several are
    refused: DuckDB would show the last one's rows alone."""
    count = _statement_count(con, sql)
    if not count:
        raise BaccaratError(f"no statement to run in {sql!r} (an option of `baccarat sql`? see --help)")
    if count > 1:
        try:
            refuse_all_but_queries(con, sql)  # a statement that acts is named as the reason first
        except duckdb.Error as error:
            raise BaccaratError(error_with_hint(error)) from None
        raise BaccaratError(f"{count} statements given, and the argument takes one query: give several on stdin "
                            "(`baccarat sql < queries.sql`), each ending in ';'")
    _run(con, bounds, sql)


def _run(con: duckdb.DuckDBPyConnection, bounds: Bounds, sql: str) -> None:
    """Show what `sql` returns, on a cursor of its own, which goes with the statement whatever became of it."""
    cursor = con.cursor()
    try:
        with _ended_if_stuck(bounds):
            _interruptible(cursor, bounds, lambda: _show_query(cursor, bounds, sql))
    finally:
        with contextlib.suppress(duckdb.Error):
            cursor.close()


@contextlib.contextmanager
def _ended_if_stuck(bounds: Bounds) -> Iterator[None]:
    """The block, ending the process (status 2) if it runs STOPPING_SECONDS past the timeout."""
    done = threading.Event()

    def watch() -> None:
        if not done.wait(bounds.timeout + STOPPING_SECONDS):
            _end_now(bounds.timeout_message(STUCK), BaccaratError.exit_status, bounds)

    threading.Thread(target=watch, daemon=True).start()
    try:
        yield
    finally:
        done.set()


def _end_now(message: str, status: int, bounds: Bounds) -> NoReturn:
    """End this process at once, in one line, while DuckDB's thread still runs the query: the warehouse
    is open read-only, so nothing is left half-written; the query's spill goes."""
    shutil.rmtree(bounds.spill_folder(), ignore_errors=True)
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    print(f"error: {message}", file=sys.stderr, flush=True)
    os._exit(status)


def _statement_count(con: duckdb.DuckDBPyConnection, sql: str) -> int:
    try:
        return len(con.extract_statements(sql))
    except duckdb.Error as error:
        raise BaccaratError(error_with_hint(error)) from None


def _show_query(con, bounds: Bounds, sql: str) -> None:
    """Refuse all but queries, then run and show it within the bounds; DuckDB's errors in one line, a
    damaged or missing file under a view as a failure of the world."""
    try:
        with bounds.timed(con) as if_late:
            refuse_all_but_queries(con, sql)
            if (result := con.sql(sql)) is not None and (written := show_result(result)) is not None:
                if_late.append(f"{_rows_written(written)} the whole result")  # a query runs in show_result
    except duckdb.Error as error:
        on_the_data = failed_on_the_data(error)
        hint = damaged_file_hint(error) if on_the_data else None
        lines = [error_with_hint(error), *([hint] if hint else []), *getattr(error, "__notes__", ())]
        raise (WorldFailure if on_the_data else BaccaratError)("; ".join(lines)) from None
    except MemoryError as error:  # its rows as Python values, past memory_capped's headroom
        raise BaccaratError("; ".join([f"the query's rows do not fit in its memory limit, {bounds.memory_limit:,} "
                                       f"bytes ({bounds.given_by('memory_limit')})",
                                       *getattr(error, "__notes__", ())])) from None


def show_result(result: duckdb.DuckDBPyRelation) -> int | None:
    """On a terminal, DuckDB's box, cut to fit the screen; anywhere else (a pipe, a file, a cron log)
    every row and every column whole, tab-separated under a header line, as it is fetched, until the
    reader leaves (`| head`): then the query stops, as nothing would read the rest. A query that fails
    once rows were written (its timeout, `> file`) fails with a note saying so: the file is not its result.
    Returns how many rows were written: the whole result; None for the box or a reader gone."""
    if sys.stdout.isatty():
        result.show(max_width=200, max_rows=200)
        return None
    batches = _python_rows(_batches(result.to_arrow_reader(ROWS_PER_FETCH)))
    first = next(batches, None)  # a query that fails on its first rows, or cannot hold them, prints nothing
    writer = csv.writer(sys.stdout, delimiter="\t", lineterminator="\n")
    writer.writerow(result.columns)
    written = 0
    try:
        for rows in itertools.chain([first] if first is not None else [], batches):
            writer.writerows(rows)
            sys.stdout.flush()
            written += len(rows)
            if _reader_gone():
                return None  # nobody reads the rest, or a note on it
    except (duckdb.Error, MemoryError) as error:
        first = rows = None  # the rows held go before the note is made
        error.add_note(f"{_rows_written(written, 'before it')} only part of the result")
        raise
    return written


def _rows_written(count: int, when: str = "") -> str:
    """'the 1 row written is', 'the 2 rows written before it are': a note's subject and verb agreeing."""
    words = ["the", f"{count:,}", "row" if count == 1 else "rows", "written", when, "is" if count == 1 else "are"]
    return " ".join(word for word in words if word)


def _python_rows(batches: Iterator) -> Iterator[list[tuple]]:
    """Each record batch's rows as Python values, as SQL shows them."""
    for batch in batches:
        yield list(zip(*(map(_plain, column.to_pylist()) for column in batch.columns)))


def _reader_gone() -> bool:
    """Whether stdout's reader closed the pipe: the CLI's stdout (pipeline.cli.app.ReaderWatch) keeps going
    into os.devnull then, and says so in `gone`; any other stdout raises BrokenPipeError itself."""
    return getattr(sys.stdout, "gone", False)


def _batches(reader) -> Iterator:
    """The reader's record batches. A query that fails (is interrupted, runs out of memory, meets a damaged
    file) after its first batch reaches Python through Arrow's stream as a bare OSError carrying DuckDB's
    message: it is raised as DuckDB's error again, so that it ends like one that fails at the start."""
    while True:
        try:
            batch = next(reader)
        except StopIteration:
            return
        except OSError as error:
            message = str(error)
            failure = duckdb.InterruptException if message.startswith("INTERRUPT Error") else duckdb.Error
            raise failure(message) from None
        yield batch


def _plain(value):
    """A value as SQL shows it: true/false, NULL as nothing; decimals, numbers and text as they are."""
    return str(value).lower() if isinstance(value, bool) else value


def _interruptible(con: duckdb.DuckDBPyConnection, bounds: Bounds, work: Callable[[], None]) -> None:
    """work() with Ctrl-C stopping DuckDB's query: while it runs, SIGINT only wakes a thread that
    interrupts the connection (again until work ends: an interrupt before DuckDB starts the query is
    lost), since a KeyboardInterrupt raised in Python, or DuckDB's own handling of the signal in a
    thread, leaves the connection busy for good (DuckDB 2.0.1). KeyboardInterrupt once it stopped;
    a query still running STOPPING_SECONDS after the Ctrl-C ends the process (130)."""
    signalled, finished = threading.Event(), threading.Event()
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)

    def interrupt_on_signal() -> None:
        if os.read(wake_read, 1) and not finished.is_set():
            signalled.set()
            give_up = time.monotonic() + STOPPING_SECONDS
            while not finished.wait(0.05):
                con.interrupt()
                if time.monotonic() > give_up:
                    _end_now(stop_word(), stop_status(), bounds)

    watcher = threading.Thread(target=interrupt_on_signal, daemon=True)
    watcher.start()
    previous = signal.signal(signal.SIGINT, lambda *_: None)
    signal.set_wakeup_fd(wake_write)
    try:
        work()
    except (duckdb.InterruptException, PipelineError):  # the query's error, or its interruption's
        if not signalled.is_set():
            raise
    finally:
        finished.set()
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGINT, previous)
        os.write(wake_write, b"\0")  # the watcher ends
        watcher.join()
        os.close(wake_read)
        os.close(wake_write)
    if signalled.is_set():
        raise KeyboardInterrupt


# anywhere at a terminal; in a script, where a line of a string may be ".quit", and for "exit" and "quit",
# only where a statement would start
LEAVE = (".quit", ".exit", "\\q")
TABLES = "SELECT table_name FROM information_schema.tables ORDER BY 1"


def prompt(con: duckdb.DuckDBPyConnection, bounds: Bounds) -> int:
    """Statements ending in ';' from stdin (not one inside a string or a comment; in a pipe the last may
    end at the end of input); a prompt on a terminal, none in a pipe. In a pipe (a script) every statement
    runs, and the exit status is the first failure's, as for the same statement given as the argument (2
    refused, 1 damaged data), else 0; .quit, \\q, exit or end of input leaves. The prompt goes where the
    user sees it (_prompt_stream). On a terminal Ctrl-C cancels the running statement, or the one being
    typed; nothing is saved."""
    interactive = sys.stdin.isatty()
    if isinstance(sys.stdin, io.TextIOWrapper):  # a byte that is not UTF-8 is then the statement's error
        sys.stdin.reconfigure(errors="surrogateescape")
    if interactive:
        import readline  # noqa: F401  (input() gets line editing and this session's history; no file)

        print("warehouse.duckdb (read-only): tables " + ", ".join(name for (name,) in con.execute(TABLES).fetchall())
              + ".\nEnd statements with ';'. .tables, .schema [TABLE]; Ctrl-C cancels; leave with .quit, \\q or exit",
              file=_prompt_stream())
    failures, lines = [], []
    while True:
        try:
            line = _typed("baccarat> " if not lines else "     ...> ") if interactive else sys.stdin.readline()
        except EOFError:
            if interactive:  # Ctrl-D: the shell's prompt starts a line of its own
                print(file=_prompt_stream())
            break
        except KeyboardInterrupt:
            if not interactive or terminated():
                raise
            print(file=_prompt_stream())  # the line typed so far goes, and the statement it continued
            lines = []
            continue
        if not interactive and not line:  # the end of a script: its last statement needs no ';'
            if statement := "\n".join(lines).strip():
                failures.append(_run_statements(con, bounds, statement, interactive))
            break
        command = line.strip().removesuffix(";").strip()
        if (command in LEAVE and (interactive or not lines)) or (not lines and command in ("exit", "quit")):
            break
        if not lines and not line.strip():
            continue  # no statement begun: the prompt stays the first line's
        if not lines and command.startswith("."):
            failures.append(_status(lambda: _dot_command(con, command)))
            continue
        lines.append(line.rstrip("\n"))
        statement = "\n".join(lines).strip()
        if ends_a_statement(statement):
            lines = []
            failures.append(_run_statements(con, bounds, statement, interactive))
    return 0 if interactive else next(filter(None, failures), 0)


def _prompt_stream():
    """Where the prompt and its banner go: stdout on a terminal; stderr, the terminal the user sees, when
    stdout is a file or a pipe (`baccarat sql > rows.tsv`), which then holds the rows alone."""
    return sys.stdout if sys.stdout.isatty() else sys.stderr


def _typed(prompt_text: str) -> str:
    """A line typed at the terminal, after the prompt on _prompt_stream() (input() would write it to stdout)."""
    if sys.stdout.isatty():
        return input(prompt_text)
    print(prompt_text, end="", file=sys.stderr, flush=True)
    return input()


def _run_statements(con, bounds: Bounds, text: str, interactive: bool) -> int:
    """Each statement of `text` in turn (several may share a line): the exit status the first failure
    calls for, 0 if every one ran; Ctrl-C at the prompt stops them and the prompt goes on."""
    failures = []
    try:
        for statement in each_statement(text):
            failures.append(_status(lambda: _run(con, bounds, statement)))
    except KeyboardInterrupt:
        if not interactive or terminated():
            raise
        print("interrupted", file=sys.stderr)
    return next(filter(None, failures), 0)


def _status(work: Callable[[], None]) -> int:
    """0 once work() is done; its error in one line on stderr and that error's exit status otherwise."""
    try:
        work()
    except PipelineError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_status
    return 0


def _dot_command(con, command: str) -> None:
    """.tables or .schema [TABLE]; anything else is bad input."""
    name, *arguments = command.split()
    if name == ".tables" and not arguments:
        for (table,) in con.execute(TABLES).fetchall():
            print(table)
        return
    if name == ".schema" and len(arguments) <= 1:
        columns = con.sql("SELECT table_name, column_name, data_type FROM information_schema.columns "
                          "WHERE lower(table_name) = lower(coalesce($name, table_name)) "
                          "ORDER BY table_name, ordinal_position",
                          params={"name": _table_name(arguments[0]) if arguments else None})
        if not columns.limit(1).fetchall():
            raise BaccaratError(f"no table {arguments[0]!r} (.tables lists them)")
        show_result(columns)
        return
    raise BaccaratError(f"unknown command {command!r}: .tables, .schema [TABLE] or .quit")


def _table_name(written: str) -> str:
    """A table's name as a query may write it: in any case, or quoted ("rounds"), as DuckDB finds it."""
    if len(written) > 1 and written[0] == written[-1] == '"':
        return written[1:-1].replace('""', '"')
    return written
