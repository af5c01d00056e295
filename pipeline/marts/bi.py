"""The SQLAlchemy dialect BI tools connect with: `duckdb+baccarat:////absolute/path/warehouse.duckdb`,
optionally with tighter bounds (`?threads=1&memory_limit=1GB&timeout=30`). It is duckdb-engine's
dialect, except that each connection is the warehouse as `open_warehouse` opens it, and its cursors
run only what `refuse_all_but_queries` lets through, each statement within the bounds' timeout.
Registered as the `duckdb.baccarat` entry point of `sqlalchemy.dialects`; it needs duckdb-engine 0.17
and DuckDB 1.4.2 or later (1.4.2, 1.5.6 and 2.0.1 checked)."""

import contextlib
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import duckdb
import duckdb_engine

from pipeline.errors import BaccaratError, PipelineError
from pipeline.marts.bounds import Bounds
from pipeline.marts.statements import refuse_all_but_queries
from pipeline.marts.warehouse import open_warehouse

# What a BI tool may pass that changes nothing here: Superset names itself to MotherDuck, which a
# local file never reaches, and asks for a read-only connection, which this always is.
_HARMLESS_SETTINGS = {"custom_user_agent"}
_HARMLESS_ARGUMENTS = {"read_only": True}
_BOUNDS = {"timeout", "memory_limit", "threads", "max_temp_directory_size"}  # a URI may tighten these


class _QueryCursor(duckdb_engine.CursorWrapper):
    def __init__(self, warehouse: duckdb.DuckDBPyConnection, connection: "_WarehouseConnection") -> None:
        super().__init__(warehouse, connection)
        self._warehouse, self._bounds = warehouse, connection.bounds
        self._deadline: float | None = None  # when the timeout of the statement whose rows are fetched ends

    def execute(self, statement: str, parameters=None, context=None) -> None:
        refuse_all_but_queries(self._warehouse, statement)
        self._deadline = time.monotonic() + self._bounds.timeout
        with _as_duckdb_error(self._bounds.timed(self._warehouse)):
            super().execute(statement, parameters, context)

    def executemany(self, statement: str, parameters=None, context=None) -> None:
        refuse_all_but_queries(self._warehouse, statement)
        self._deadline = time.monotonic() + self._bounds.timeout
        with _as_duckdb_error(self._bounds.timed(self._warehouse)):
            super().executemany(statement, parameters, context)

    def fetchone(self):
        row = self._within_the_timeout(self._warehouse.fetchone)
        return self._exhausted_if(row is None, row)

    def fetchmany(self, size: int | None = None) -> list:
        rows = self._within_the_timeout(super().fetchmany, size)
        return self._exhausted_if(len(rows) < (size or 1), rows)  # DuckDB fetches one row by default

    def fetchall(self) -> list:
        return self._exhausted_if(True, self._within_the_timeout(self._warehouse.fetchall))

    def _within_the_timeout(self, fetch: Callable, *args):
        """DuckDB computes a result's rows as they are fetched: they come within the statement's timeout too."""
        if self._deadline is None:
            return fetch(*args)
        with _as_duckdb_error(self._bounds.timed(self._warehouse, within=self._deadline - time.monotonic())):
            return fetch(*args)

    def _exhausted_if(self, exhausted: bool, fetched):
        if exhausted:
            self._deadline = None
        return fetched


@contextlib.contextmanager
def _as_duckdb_error(bounded: contextlib.AbstractContextManager) -> Iterator[None]:
    """The bounds' one-line error as a DB-API error, which BI tools show."""
    try:
        with bounded:
            yield
    except BaccaratError as error:
        raise duckdb.InterruptException(str(error)) from None


class _WarehouseConnection(duckdb_engine.ConnectionWrapper):
    def __init__(self, warehouse: duckdb.DuckDBPyConnection, bounds: Bounds) -> None:
        super().__init__(warehouse)
        self._warehouse, self.bounds = warehouse, bounds

    def cursor(self) -> _QueryCursor:
        return _QueryCursor(self._warehouse, self)


class WarehouseDialect(duckdb_engine.Dialect):
    driver = "baccarat"
    supports_statement_cache = False  # as duckdb-engine's

    def connect(self, *cargs, **cparams) -> _WarehouseConnection:
        database = cparams.pop("database", None)
        settings = {**cparams.pop("config", {}), **cparams.pop("url_config", {})}
        if repeated := next((name for name, value in settings.items() if isinstance(value, tuple)), None):
            raise duckdb.InvalidInputException(f"{repeated}= is given {len(settings[repeated])} times in the "
                                               "connection URI: give it once")  # SQLAlchemy's query: a tuple
        bounds = {name: settings.pop(name) for name in _BOUNDS & set(settings)}
        refused = sorted(set(settings) - _HARMLESS_SETTINGS) + sorted(
            name for name, value in cparams.items() if (name, value) not in _HARMLESS_ARGUMENTS.items())
        if cargs or refused or not database:
            raise duckdb.InvalidInputException(
                "the baccarat warehouse is opened read-only with settings of its own: give only its path and "
                f"tighter bounds ({', '.join(sorted(_BOUNDS))}) "
                "(duckdb+baccarat:////absolute/path/warehouse.duckdb?threads=1)" + "".join(f", not {name}" for name in refused))
        try:
            tightened = Bounds.given().tightened(bounds)
            return _WarehouseConnection(open_warehouse(Path(database), tightened), tightened)
        except PipelineError as error:  # bad input, or a warehouse that is not what was published
            raise duckdb.IOException(str(error)) from None
