"""The settings the engines take to reach OUT: deltalake's and polars' storage options (object_store),
and a DuckDB connection that reads OUT's files through pyarrow's filesystem."""

from pipeline.cores import usable_cores

# object_store's client options, which deltalake (object_store 0.13) and polars (0.14) take. `timeout` bounds
# a whole request, connection to last byte: 0.13 has no bound on a time without data (read_timeout is 0.14's,
# and it stops polars' own credential lookup), so 30 s, object_store's default, which the largest object either
# fetches in one request takes well within (a Delta log's commit or checkpoint, one of polars' 8 MiB ranges).
_OBJECT_STORE_TIMEOUTS = {"timeout": "30s", "connect_timeout": "5s"}
# No retry starts after retry_timeout: a request ends within retry_timeout + timeout (deltalake's 50 s;
# polars' 40 s, which polars may spend twice, once more on a store it builds again after an error).
DELTA_TIMEOUTS = _OBJECT_STORE_TIMEOUTS | {"max_retries": "3", "retry_timeout": "20s"}
POLARS_TIMEOUTS = _OBJECT_STORE_TIMEOUTS | {"max_retries": 3, "retry_timeout_ms": 10_000}  # polars' own keys: ints


class EngineAdapters:
    """How deltalake, polars and DuckDB reach a Location (a mixin of Store)."""

    @property
    def storage_options(self) -> dict[str, str]:
        """Settings for deltalake (object_store): the standard environment variables, and bounded waits
        (its defaults wait three minutes for an endpoint that never answers)."""
        return self.aws_environment() | (DELTA_TIMEOUTS if not self.is_local else {})

    def polars_options(self) -> dict[str, str | int] | None:
        """Settings for polars' reader (object_store) on S3: the standard environment variables, and bounded
        waits (its defaults wait without end for an endpoint that never answers)."""
        if self.scheme != "s3":
            return None
        return {key.lower(): value for key, value in self.aws_environment().items()} | POLARS_TIMEOUTS

    def duckdb_connection(self, database: str = ":memory:"):
        """A DuckDB connection (to `database`) that reads OUT's files with DuckDB's own Parquet reader:
        on an object store through pyarrow's filesystem (pipeline/duckdb_files.py), so no DuckDB
        extension is needed."""
        import duckdb

        con = duckdb.connect(database, config={"autoinstall_known_extensions": "false",
                                               "autoload_known_extensions": "false", "threads": usable_cores()})
        if not self.is_local:
            from pipeline.duckdb_files import duckdb_filesystem

            con.register_filesystem(duckdb_filesystem(self.scheme, self.filesystem))
        return con
