"""The bounds of a reader's queries on the warehouse, set in this one place for every opening
(`baccarat sql`, the report, the BI dialect): a statement timeout, a memory limit, threads, and a temp
folder outside the data with a size cap. Each comes from the CLI, else an environment variable, else
its default; a BI connection's URI may only tighten them. DuckDB has no statement timeout of its own,
so a timer thread interrupts the connection, which stays usable."""

import contextlib
import functools
import os
import re
import tempfile
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.errors import BaccaratError

if TYPE_CHECKING:  # DuckDB itself loads with the first query: `baccarat --help` reads ENVIRONMENT
    import duckdb

ENVIRONMENT = {"timeout": "BACCARAT_SQL_TIMEOUT", "memory_limit": "BACCARAT_SQL_MEMORY_LIMIT",
               "threads": "BACCARAT_SQL_THREADS", "temp_directory": "BACCARAT_SQL_TEMP_DIRECTORY",
               "max_temp_directory_size": "BACCARAT_SQL_MAX_TEMP_DIRECTORY_SIZE"}
_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
MAX_THREADS = 256  # DuckDB starts each thread with the connection: 100,000 took many minutes to open
_FROM_URI = "{}= in the connection URI"  # where a bound a BI connection tightened came from
MAX_TIMEOUT = 1_000_000  # seconds, about 11 days; the timer that stops a query takes no wait past threading.TIMEOUT_MAX
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*", re.IGNORECASE)


# 1024TiB, beyond any machine: past 2**64 - 1 bytes DuckDB refused to open the warehouse, which read as damaged
MAX_BYTES = 2**50


def size_in_bytes(text: str, name: str) -> int:
    """'2GB', '512 MiB', '1000000' as bytes, up to MAX_BYTES; a one-line error for anything else."""
    match = _SIZE.fullmatch(str(text))
    if not match or match.group(2).lower() not in _UNITS or float(match.group(1)) <= 0:
        raise BaccaratError(f"{name} must be a size such as 2GB or 512MiB, not {text!r}")
    size = int(float(match.group(1)) * _UNITS[match.group(2).lower()])
    if size > MAX_BYTES:
        raise BaccaratError(f"{name} must be at most 1024TiB, not {text!r}")
    return size


def _positive(text: str, name: str, kind: type) -> int | float:
    try:
        value = kind(text)
    except (TypeError, ValueError):
        value = 0
    if not value > 0:
        raise BaccaratError(f"{name} must be a positive {'whole ' if kind is int else ''}number, not {text!r}")
    return value


def _at_most(value: int | float, most: int, name: str) -> int | float:
    if value > most:
        raise BaccaratError(f"{name} must be at most {most:,}, not {value:,}")  # 1000001.0 as 1,000,001.0: :g said 1e+06
    return value


def _default_temp_directory() -> Path:
    return Path(tempfile.gettempdir(), "baccarat-sql")


@functools.cache
def _spill_of(pid: int) -> str:
    """The name of process `pid`'s spill folder (by pid: a forked process has its own)."""
    return f"{pid}-{uuid.uuid4().hex}"


@dataclass(frozen=True)
class Bounds:
    timeout: float = 60.0  # seconds
    memory_limit: int = 2 * 10**9  # bytes
    threads: int = min(4, os.cpu_count() or 1)  # not loky's count: BI tools install the package without it
    temp_directory: Path = _default_temp_directory()
    max_temp_directory_size: int = 10 * 10**9  # bytes

    # Where each bound that is not the default came from, named as the user gave it (`--timeout`,
    # BACCARAT_SQL_TIMEOUT, a BI URI's `timeout=`), and the bounds the opening command takes as options.
    origins: dict = field(default_factory=dict, compare=False)
    options: frozenset = frozenset()

    @classmethod
    def given(cls, **values) -> "Bounds":
        """The bounds from `values` (the CLI's options; None where not given), else the environment, else
        the defaults; a bad one is a one-line error naming the option or the variable it came from."""
        chosen = {name: (os.environ[variable], variable) for name, variable in ENVIRONMENT.items()
                  if os.environ.get(variable, "").strip()}
        chosen |= {name: (value, _option(name)) for name, value in values.items() if value is not None}
        return replace(cls(options=frozenset(values)), origins={name: origin for name, (_, origin) in chosen.items()},
                       **{name: _parsed(name, value, origin) for name, (value, origin) in chosen.items()})

    def tightened(self, settings: dict[str, str]) -> "Bounds":
        """These bounds, tightened by a BI URI's query (`?threads=1&memory_limit=1GB`); loosening one, or
        naming the temp folder, is refused in one line."""
        named = {field.name for field in fields(self)} - {"temp_directory", "origins", "options"}
        unknown = sorted(set(settings) - named)
        if unknown:
            raise BaccaratError(f"{unknown[0]} cannot be set from a connection: it may tighten only "
                                f"{', '.join(sorted(named))}")
        given = {name: _FROM_URI.format(name) for name in settings}
        tighter = {name: _parsed(name, value, given[name]) for name, value in settings.items()}
        looser = [name for name, value in tighter.items() if value > getattr(self, name)]
        if looser:
            raise BaccaratError(f"{looser[0]} can only be tightened from a connection: at most "
                                f"{getattr(self, looser[0])} here")
        return replace(self, origins=self.origins | given, **tighter)

    def given_by(self, name: str) -> str:
        """Where the bound came from, as the user gave it, or `the default`."""
        return self.origins.get(name, "the default")

    def config(self, data: Path) -> dict[str, str]:
        """DuckDB's settings for a connection whose spill goes to its process's folder, outside `data`: the
        same for every connection of the process, so that they share the database of a file (DuckDB opens
        a file once per process, with one configuration)."""
        if self.temp_directory.absolute().is_relative_to(data.absolute()):
            raise BaccaratError(f"the temp folder {self.temp_directory} ({self.given_by('temp_directory')}) is inside "
                                f"the data {data}: give one outside it")
        try:
            self.temp_directory.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise BaccaratError(f"cannot make the temp folder {self.temp_directory}: {error.strerror}") from None
        return {"memory_limit": f"{self.memory_limit}B", "threads": str(self.threads),
                "temp_directory": str(self.spill_folder()),
                "max_temp_directory_size": f"{self.max_temp_directory_size}B"}

    def spill_folder(self) -> Path:
        """Where this process's queries spill."""
        return self.temp_directory / _spill_of(os.getpid())

    def timeout_message(self, *notes: str, late: bool = False) -> str:
        """The one line for a query stopped at its timeout (or `late`: whose result came after it), with
        `notes` on what became of it."""
        what = "the query's result came after" if late else "the query was stopped after"
        return "; ".join([f"{what} {self.timeout:g} s, its statement timeout ({self.given_by('timeout')})",
                          *notes, f"give it more time with {self.more_of('timeout', 'SECONDS')}"])

    def more_of(self, name: str, value: str) -> str:
        """How to raise bound `name`: the opening command's option, a BI URI's key that tightened it (up to
        the variable's), else the variable."""
        if name in self.options:
            return f"--{name.replace('_', '-')} {value}"
        if self.given_by(name) == _FROM_URI.format(name):
            return f"a larger {name}= in the connection URI (at most {ENVIRONMENT[name]})"
        return f"{ENVIRONMENT[name]}={value}"

    @contextlib.contextmanager
    def timed(self, con: "duckdb.DuckDBPyConnection", within: float | None = None) -> Iterator[list[str]]:
        """Run the block's queries on `con` within the timeout: past it, DuckDB's query is interrupted and
        the block ends in a one-line BaccaratError, which carries the notes of DuckDB's error (what of the
        result was written: pipeline/marts/shell.py), even when the query ended all the same (DuckDB saw
        no interrupt while it folded constants): then with the notes the block added to the list it is
        given (what it wrote); the connection stays usable. `within`: the seconds left of a statement's
        timeout that began before the block (its rows fetched after it ran), instead of the whole timeout."""
        import duckdb

        expired, ended = threading.Event(), threading.Event()

        def expire() -> None:  # again until the block ends: an interrupt while DuckDB plans the query is lost
            expired.set()
            while not ended.wait(0.05):
                con.interrupt()

        timer = threading.Timer(self.timeout if within is None else max(within, 0), expire)
        timer.daemon = True
        timer.start()
        if_late: list[str] = []
        try:
            yield if_late
        except duckdb.InterruptException as error:
            if not expired.is_set():
                raise
            raise BaccaratError(self.timeout_message(*getattr(error, "__notes__", ()))) from None
        finally:
            ended.set()
            timer.cancel()
        if expired.is_set():  # DuckDB ended the query without seeing an interrupt: its result came too late
            raise BaccaratError(self.timeout_message(*if_late, late=True))


def _option(name: str) -> str:
    return f"--{name.replace('_', '-')}"


def _parsed(name: str, value, origin: str):
    """A bound's value, or a one-line error naming `origin`, where the user gave it."""
    if name in ("memory_limit", "max_temp_directory_size"):
        return value if isinstance(value, int) else size_in_bytes(value, origin)
    if name == "timeout":
        origin = f"{origin} (seconds)"
        return _at_most(_positive(value, origin, float), MAX_TIMEOUT, origin)
    if name == "threads":
        return _at_most(_positive(value, origin, int), MAX_THREADS, origin)
    return Path(value)
