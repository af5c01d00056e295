"""The SQLAlchemy dialect BI tools connect with: `duckdb+baccarat:////absolute/path/warehouse.duckdb`.
It is duckdb-engine's dialect, except that each connection is the warehouse as `open_warehouse`
opens it, and its cursors run only what `refuse_all_but_queries` lets through. Registered as the
`duckdb.baccarat` entry point of `sqlalchemy.dialects`; it needs duckdb-engine 0.17 and DuckDB 1.4.2 or
later (1.4.2, 1.5.6 and 2.0.1 checked)."""

from pathlib import Path

import duckdb
import duckdb_engine

from pipeline.errors import BaccaratError
from pipeline.marts.warehouse import open_warehouse, refuse_all_but_queries

# What a BI tool may pass that changes nothing here: Superset names itself to MotherDuck, which a
# local file never reaches, and asks for a read-only connection, which this always is.
_HARMLESS_SETTINGS = {"custom_user_agent"}
_HARMLESS_ARGUMENTS = {"read_only": True}


class _QueryCursor(duckdb_engine.CursorWrapper):
    def __init__(self, warehouse: duckdb.DuckDBPyConnection, connection: duckdb_engine.ConnectionWrapper) -> None:
        super().__init__(warehouse, connection)
        self._warehouse = warehouse

    def execute(self, statement: str, parameters=None, context=None) -> None:
        refuse_all_but_queries(self._warehouse, statement)
        super().execute(statement, parameters, context)

    def executemany(self, statement: str, parameters=None, context=None) -> None:
        refuse_all_but_queries(self._warehouse, statement)
        super().executemany(statement, parameters, context)


class _WarehouseConnection(duckdb_engine.ConnectionWrapper):
    def __init__(self, warehouse: duckdb.DuckDBPyConnection) -> None:
        super().__init__(warehouse)
        self._warehouse = warehouse

    def cursor(self) -> _QueryCursor:
        return _QueryCursor(self._warehouse, self)


class WarehouseDialect(duckdb_engine.Dialect):
    driver = "baccarat"
    supports_statement_cache = False  # as duckdb-engine's

    def connect(self, *cargs, **cparams) -> _WarehouseConnection:
        database = cparams.pop("database", None)
        settings = {**cparams.pop("config", {}), **cparams.pop("url_config", {})}
        refused = sorted(set(settings) - _HARMLESS_SETTINGS) + sorted(
            name for name, value in cparams.items() if (name, value) not in _HARMLESS_ARGUMENTS.items())
        if cargs or refused or not database:
            raise duckdb.InvalidInputException(
                "the baccarat warehouse is opened read-only with settings of its own: give only its path "
                "(duckdb+baccarat:////absolute/path/warehouse.duckdb)" + "".join(f", not {name}" for name in refused))
        try:
            return _WarehouseConnection(open_warehouse(Path(database)))
        except BaccaratError as error:
            raise duckdb.IOException(str(error)) from None
