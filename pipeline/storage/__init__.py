"""The one place that knows where tables live: a local folder or an object-store URI (files through
pyarrow.fs), and the Delta Lake tables under it (commits through deltalake).

Layout under OUT: the tables the contracts name (schemas/*.yaml: `rounds`, `shoes`, `runs`, ... and
`marts/<name>`), each a Delta table partitioned by the column they declare (run_id). Data files are
`<table>/run_id=<run>/<name>.parquet`; a file exists for readers only once a Delta commit adds it.

Store is one value, OUT, composed of the parts: where it is (location), the tables' layout (layout),
their logs (delta_log), Delta commits and reads (delta), the engines' settings (adapters) and a task's
data files (files).
"""

from dataclasses import dataclass

from pipeline.storage.adapters import DELTA_TIMEOUTS, EngineAdapters
from pipeline.storage.delta import (COMMIT_ATTEMPTS, MAX_RETENTION_HOURS, MIN_RETENTION_HOURS, TABLE_CONFIGURATION,
                                    DeltaTables)
from pipeline.storage.delta_log import DELTA_LOG, LAST_CHECKPOINT, DeltaLog
from pipeline.storage.errors import CommitConflict, DamagedLog, PartitionTaken, StorageError, first_line
from pipeline.storage.files import STALE_AGE, STALE_SECONDS, DataFiles, HashingStream
from pipeline.storage.layout import Layout, data_file, partition_column
from pipeline.storage.location import OBJECT_STORE_SCHEMES, WAREHOUSE, Location, parquet_footer

__all__ = [
    "COMMIT_ATTEMPTS", "DELTA_LOG", "DELTA_TIMEOUTS", "LAST_CHECKPOINT", "MAX_RETENTION_HOURS", "MIN_RETENTION_HOURS",
    "OBJECT_STORE_SCHEMES", "STALE_AGE", "STALE_SECONDS", "TABLE_CONFIGURATION", "WAREHOUSE", "CommitConflict",
    "DamagedLog", "HashingStream", "PartitionTaken", "StorageError", "Store", "data_file", "first_line", "parquet_footer",
    "partition_column",
]


@dataclass(frozen=True)
class Store(DataFiles, DeltaTables, DeltaLog, EngineAdapters, Layout, Location):
    """OUT: a local folder (kept as an absolute path) or `scheme://bucket/prefix`, and its tables."""
