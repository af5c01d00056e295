"""The typer app, the option types the commands share, and the way a command's end becomes an exit
status: bad input 2, a failure of the world 1, an interrupt 130 (SIGTERM 143, SIGHUP 129), each with one
line on stderr."""

import _thread
import contextlib
import errno
import fcntl
import io
import os
import sys
import time
from pathlib import Path
from typing import Annotated

import typer

from pipeline.allocator import set_polars_allocator
from pipeline.cards import MAX_DECKS, MIN_DECKS, decks_text
from pipeline.errors import BaccaratError, PipelineError
from pipeline.termination import (INTERRUPTED, ignore_further_stops, stop_status, stop_word, stopped,
                                  terminate_as_interrupt)
from pipeline.user_files import as_bytes_read, not_utf8

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    # Click's plain help: flags read as flags (rich panels give them a <bool> type) and option names
    # wrap rather than being cut short on a narrow terminal.
    rich_markup_mode=None,
    help="Baccarat analytics pipeline: exact odds, Spark simulation, marts and reports.",
)



def parse_store(text: str):
    """--out as a pipeline.storage.Store, loaded only by the commands that read or write tables."""
    from pipeline.storage import Store

    return Store.parse(text)


OUT_HELP = "Where the tables live: a local folder, or s3://BUCKET/PREFIX (also gs://, az://, abfss://)."
# a Store: typer parses the default too
OutOption = Annotated[object, typer.Option(parser=parse_store, metavar="PATH|URI", help=OUT_HELP)]
# --out of a command that needs it only when another option is not given: parsed by parse_store when it is used
LaterOutOption = Annotated[str, typer.Option(metavar="PATH|URI", help=OUT_HELP)]


def parse_path(text: str | Path) -> Path:
    """A path option's value; an empty one is bad input: as a Path it would be the current folder."""
    if text == "":
        raise typer.BadParameter("the path is empty")
    return Path(text)


def path_option(*names: str, help: str):
    """An option taking a local path (typer parses its default too)."""
    return typer.Option(*names, parser=parse_path, metavar="PATH", help=help)


WarehouseOption = Annotated[Path | None, path_option(
    help="The DuckDB warehouse file; default OUT/warehouse.duckdb for a local OUT, else ./warehouse.duckdb.")]
DEFAULT_OUT = "data"

RulesOption = Annotated[
    str, typer.Option("--rules", help="A rule set in conf/rules by name, or the path of a YAML file.")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]


def parse_master(text: str) -> str:
    """--master: an empty one is bad input, not the default; so is one of a form Spark cannot use, checked
    here (pipeline.spark_master.check_master_form) even when Spark will not start."""
    from pipeline.spark_master import check_master_form

    if not text.strip():
        raise typer.BadParameter("the Spark master is empty (local[*], local[N], spark://HOST:PORT, yarn or k8s://...)")
    try:
        return check_master_form(text)
    except BaccaratError as error:
        raise typer.BadParameter(str(error)) from None


MasterOption = Annotated[str | None, typer.Option(parser=parse_master, metavar="URL",
                                                  help="Spark master URL; default local[*].")]


def parse_decks(text: str) -> int | str:
    """--decks: a count of decks, or `infinite` (cards dealt with replacement) for games with options."""
    from pipeline.games.value import INFINITE

    if text == INFINITE:
        return INFINITE
    if not text.isdigit() or not MIN_DECKS <= int(text) <= MAX_DECKS:
        raise typer.BadParameter(f"{text!r} is not {MIN_DECKS} to {MAX_DECKS} decks or {INFINITE!r}")
    return int(text)


DecksOption = Annotated[int | None, typer.Option(  # an int, or INFINITE from the parser (typer takes no unions)
    parser=parse_decks, metavar="N|infinite",
    help="Override the rule set's number of decks (1 to 8); `infinite` deals with replacement (games with options).")]


def shoe_text(decks: int | str) -> str:
    from pipeline.games.value import INFINITE

    return "infinite deck (with replacement)" if decks == INFINITE else decks_text(decks)


def no_banque_banker_strategy(banker_strategy: str | None) -> None:
    if banker_strategy is not None:
        raise BaccaratError("the banque Banker plays a policy for both hands: give --banker-policy NAME (conf/banque), "
                            "not --banker-strategy")


def count(number: int, thing: str) -> str:
    return f"{number:,} {thing}" + ("" if number == 1 else "s")


@app.callback()
def _commands() -> None:
    """Baccarat analytics pipeline: exact odds, Spark simulation, marts and reports."""


DUCKDB_INTERRUPTED = "Query interrupted"  # the RuntimeError's message (DuckDB 2.0)
READER_GONE = 141  # 128 + SIGPIPE: a shell's status for a command whose reader closed the pipe first


class ReaderWatch:
    """stdout or stderr for a reader that may leave (`baccarat run | head -1`, or a terminal that closed): the
    first write that finds the pipe closed, or the terminal hung up (EIO), points the stream's descriptor at
    os.devnull, so that what follows goes nowhere and the command carries on to its end (or, sent SIGHUP, to
    its stop); `gone` remembers it. Other failures (a full disk) still raise."""

    def __init__(self, stream):
        self._stream = stream
        self.gone = False

    def write(self, text: str) -> int:
        self._watched(self._stream.write, text)
        return len(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self._watched(self._stream.flush)

    def _watched(self, action, *args) -> None:
        try:
            action(*args)
        except OSError as error:
            if not isinstance(error, BrokenPipeError) and error.errno != errno.EIO:
                raise
            self.gone = True
            self._to_devnull()

    def _to_devnull(self) -> None:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError, io.UnsupportedOperation):  # no descriptor: every write is dropped here
            pass

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; bad input of any kind ends in one line on stderr and exit status 2. A reader that
    leaves early never stops the work: the command finishes, then its status is READER_GONE."""
    argv = sys.argv[1:] if argv is None else argv
    terminate_as_interrupt()  # spark-submit's jobs/*.py call main() itself
    set_polars_allocator()
    if _standard_streams_opened():
        print("error: stdout is closed: to drop a command's output, send it to /dev/null", file=sys.stderr)
        return 2
    if refusal := _not_utf8_input(argv):
        print(f"error: {refusal}: paths, names and queries are read as UTF-8", file=sys.stderr)
        return 2
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = watched = ReaderWatch(sys.stdout), ReaderWatch(sys.stderr)
    try:
        with _DroppedInterrupts().watching() as interrupts:
            status = _command_status(argv or ["--help"])
        if status == 0 and interrupts.dropped:
            status = _interrupted()
    finally:
        sys.stdout, sys.stderr = streams
    return READER_GONE if status == 0 and any(stream.gone for stream in watched) else status


class _DroppedInterrupts:
    """A Ctrl-C whose KeyboardInterrupt is raised inside a finalizer is dropped by Python ("Exception ignored
    in ...", then the command carries on): pyspark's SIGINT handler raises wherever the main thread is, py4j's
    finalizers included. While the command runs, such an interrupt is delivered again a moment later, from
    another thread, outside the finalizer; `dropped` tells a command that still ended well that it was
    interrupted."""

    AGAIN_AFTER_SECONDS = 0.05

    def __init__(self):
        self.dropped = False
        self._running = True

    def keep(self, unraisable) -> None:
        """sys.unraisablehook's part for a KeyboardInterrupt; it starts a thread that it does not wait for
        (threading's start waits, and the interrupt delivered again would land in that wait)."""
        self.dropped = True
        _thread.start_new_thread(self._deliver_again, ())

    def _deliver_again(self) -> None:
        time.sleep(self.AGAIN_AFTER_SECONDS)
        if self._running:
            _thread.interrupt_main()

    @contextlib.contextmanager
    def watching(self):
        previous = sys.unraisablehook
        sys.unraisablehook = lambda unraisable: (self.keep if isinstance(unraisable.exc_value, KeyboardInterrupt)
                                                 else previous)(unraisable)
        try:
            yield self
        finally:
            self._running = False
            sys.unraisablehook = previous


def _standard_streams_opened() -> bool:
    """Give each standard stream that was closed (`>&-`, `2>&-`) os.devnull, so that no file the command
    opens takes its descriptor, and make stdout and stderr print what their encoding cannot show as '?'
    (`PYTHONIOENCODING=ascii`); whether stdout was the one closed (a closed stderr only loses the messages)."""
    closed = []
    for descriptor, name in enumerate(("stdin", "stdout", "stderr")):
        if _usable(descriptor):
            continue
        opened = os.open(os.devnull, os.O_RDONLY if descriptor == 0 else os.O_WRONLY)
        if opened != descriptor:
            os.dup2(opened, descriptor)
            os.close(opened)
        if getattr(sys, name) is None:
            setattr(sys, name, open(descriptor, "r" if descriptor == 0 else "w", closefd=False))
        closed.append(name)
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="replace")
    return "stdout" in closed


def _usable(descriptor: int) -> bool:
    """Whether a standard stream's descriptor is open the right way: a closed one may have been taken by a
    file opened before the command started (a launcher's script, read-only, as stderr)."""
    try:
        access = fcntl.fcntl(descriptor, fcntl.F_GETFL) & os.O_ACCMODE
    except OSError:
        return False
    return access != (os.O_WRONLY if descriptor == 0 else os.O_RDONLY)


# The environment variables the commands read paths, names and settings from (some through Spark or pyarrow).
_READ_VARIABLES = ("BACCARAT_", "AWS_", "AZURE_", "XDG_STATE_HOME", "JAVA_HOME")


def _not_utf8_input(argv: list[str]) -> str | None:
    """Which argument, or variable the commands read, is not UTF-8 text (pyarrow, DuckDB and py4j would
    end in a traceback of their own), or None."""
    if (bad := next((arg for arg in argv if not_utf8(arg)), None)) is not None:
        return f"the argument '{as_bytes_read(bad)}' is not UTF-8 text ({not_utf8(bad)})"
    for name, value in os.environ.items():
        if name.startswith(_READ_VARIABLES) and not_utf8(value):
            return f"the environment variable {name} '{as_bytes_read(value)}' is not UTF-8 text ({not_utf8(value)})"
    return None


def _command_status(argv: list[str]) -> int:
    try:
        result = typer.main.get_command(app).main(args=argv, prog_name="baccarat", standalone_mode=False)
    except typer.Exit as done:
        return done.exit_code
    except (typer.Abort, KeyboardInterrupt):
        return _interrupted()
    except RuntimeError as error:  # DuckDB's answer to a Ctrl-C during a query on the main thread
        if str(error) != DUCKDB_INTERRUPTED:
            raise
        return _interrupted()
    except typer.TyperException as error:  # bad arguments, as click words them (less pydantic's "Value error, ")
        _error(error.format_message().replace(": Value error, ", ": "))
        return 2
    except PipelineError as error:  # bad input: 2; a failure of the world (a full disk, a store, ...): 1
        _error(str(error))
        return error.exit_status
    except OSError as error:  # what no command words itself, such as output to a full disk (`> /dev/full`)
        _error(f"{error.strerror or error}{f': {error.filename}' if error.filename else ''}")
        return 1
    if result == INTERRUPTED:  # typer's answer to a Ctrl-C it caught, which no command returns itself
        return _interrupted()
    return result if isinstance(result, int) else 0


def _error(message: str) -> None:
    """The one line of an error, whatever it quotes: a line break in a path, a name or a query given
    (`--out $'data\\nmore'`) is written as \\n."""
    _after_stdout("error: " + message.replace("\r", "\\r").replace("\n", "\\n"))


def _interrupted() -> int:
    _after_stdout(f"error: {stop_word()}")
    return stop_status()


def _after_stdout(line: str) -> None:
    """`line` on stderr once stdout's lines so far are written: in a log that takes both (a cron line's
    `>> log 2>&1`), an error or a stop comes after the work done before it, not before lines of that work
    still in stdout's buffer ("published ..." after "error: terminated"). Should stdout fail here, the end
    of the command (_flushed) says so."""
    with contextlib.suppress(OSError):
        sys.stdout.flush()
    print(line, file=sys.stderr)


def console() -> None:
    """Console-script entry point: the process ends with main()'s status once its output is flushed,
    without the interpreter's finalisation, where native threads (Arrow's, DuckDB's) still releasing
    Python objects can abort the process (SIGABRT, exit 134) after the command has succeeded."""
    from pipeline.spark import drivers_ending_here

    status = None
    try:  # on leaving drivers_ending_here, the drivers left are stopped at once
        with _DroppedInterrupts().watching() as interrupts, drivers_ending_here() as end_drivers:
            status = main()
            if not stopped(status) and end_drivers(keep=status == 0):  # a Ctrl-C while the JVM wrote its archive
                status = _interrupted()
            if stopped(status):
                ignore_further_stops()
        if interrupts.dropped and status in (0, READER_GONE):  # dropped in a finalizer as the drivers ended
            status = _ended_by_interrupt()
    except KeyboardInterrupt:  # a Ctrl-C once main() returned, as its drivers ended
        status = status if stopped(status) else _ended_by_interrupt()
    try:
        status = _flushed(status)
    except KeyboardInterrupt:  # a Ctrl-C while the output's last bytes were written
        status = _ended_by_interrupt()
    os._exit(status)


def _ended_by_interrupt() -> int:
    """A Ctrl-C after the command itself returned ends the process as one during it does: one line and 130,
    and a Ctrl-C more is no traceback."""
    ignore_further_stops()
    return _interrupted()


def _flushed(status: int) -> int:
    """The status once stdout and stderr are flushed: a reader that left, or a full disk, changes a success."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:  # the reader stopped reading (`| head`): nothing left to say
            status = status or READER_GONE
        except OSError as error:  # the output's last bytes cannot be written (a full disk)
            if stream is sys.stdout and not status:
                print(f"error: {error.strerror or error}", file=sys.stderr)
            status = status or 1
    return status
