"""The settings the engines take to reach OUT: deltalake's and polars' storage options (object_store),
and a DuckDB connection that reads OUT's files through pyarrow's filesystem."""

from pipeline.cores import usable_cores

DELTA_TIMEOUTS = {"timeout": "120s", "connect_timeout": "5s", "max_retries": "3", "retry_timeout": "30s"}


class EngineAdapters:
    """How deltalake, polars and DuckDB reach a Location (a mixin of Store)."""

    @property
    def storage_options(self) -> dict[str, str]:
        """Settings for deltalake (object_store): the standard environment variables, and bounded waits
        (its defaults wait three minutes for an endpoint that never answers)."""
        return self.aws_environment() | (DELTA_TIMEOUTS if not self.is_local else {})

    def polars_options(self) -> dict[str, str] | None:
        return {key.lower(): value for key, value in self.aws_environment().items()} or None

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
