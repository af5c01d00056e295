"""The one place that knows where tables live: a local folder or an object-store URI (files through
pyarrow.fs), and the Delta Lake tables under it (commits through deltalake).

Layout under OUT: `rounds`, `shoes`, `runs` and `marts/<name>`, each a Delta table partitioned by
run_id. Data files are `<table>/run_id=<run>/<name>.parquet`; a file exists for readers only once a
Delta commit adds it.
"""

import contextlib
import hashlib
import io
import json
import os
import random
import re
import socket
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from urllib.parse import urlparse

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from pipeline.atomic import TEMPORARY_PREFIX
from pipeline.errors import BaccaratError, WorldFailure

OBJECT_STORE_SCHEMES = ("s3", "gs", "az", "abfss")
STALE_SECONDS = 600  # a temporary file no writer has touched for this long is a dead attempt's
PARTITION = "run_id"
COMMIT_ATTEMPTS = 8
MIN_RETENTION_HOURS = 24
WAREHOUSE = "warehouse.duckdb"
DELTA_LOG = "_delta_log"
LAST_CHECKPOINT = "_last_checkpoint"
_LOG_ENTRY = re.compile(r"\d{20}\.(json|checkpoint(\.\d+\.\d+)?\.parquet)")
# Runs record the versions of their commits, so the logs that reach them are kept.
TABLE_CONFIGURATION = {"delta.enableExpiredLogCleanup": "false"}
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
_S3_TIMEOUTS = {"connect_timeout": 5, "request_timeout": 60}
# The variables each store's settings and credentials come from (see _s3_settings and _aws_environment).
_SETTINGS_VARIABLES = {
    "s3": ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION", "AWS_DEFAULT_REGION",
           "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_ALLOW_HTTP"),
    "az": ("AZURE_STORAGE_ACCOUNT_NAME",),
}
DELTA_TIMEOUTS = {"timeout": "120s", "connect_timeout": "5s", "max_retries": "3", "retry_timeout": "30s"}


class StorageError(WorldFailure):
    """The store refused or failed an operation (missing bucket, refused credentials, I/O)."""


class DamagedLog(StorageError):
    """A table's log that deltalake cannot read past an entry (missing, or not a commit)."""

    def __init__(self, table: str, entry: str, what: str):
        super().__init__(f"the log of table {table!r} is damaged: {entry}: {what}")
        self.table = table
        self.entry = entry


class CommitConflict(StorageError):
    """A Delta commit lost to concurrent commits more times than it retries."""


@dataclass(frozen=True)
class Store:
    """OUT: a local folder (kept as an absolute path) or `scheme://bucket/prefix`."""

    uri: str

    @classmethod
    def parse(cls, text: str) -> "Store":
        """A store from what a user typed, or a one-line error; a path that only looks like a URI
        (`s3:x`, `s3:/x`) is refused rather than taken as a local folder."""
        text = str(text).strip()
        if not text:
            raise BaccaratError("the output location is empty")
        match = _SCHEME.match(text)
        if match is None:
            return cls(str(Path(text).expanduser().absolute()))
        scheme = match[1].lower()
        if scheme == "file" and text.startswith("file:///"):
            return cls(str(Path(urlparse(text).path).absolute()))
        if scheme not in OBJECT_STORE_SCHEMES:
            raise BaccaratError(
                f"{text!r}: unknown scheme {scheme + ':'!r}; use a local folder or s3://, gs://, az://, "
                "abfss:// (write ./" + text + " for a local folder of that name)")
        parsed = urlparse(text)
        if not text.lower().startswith(f"{scheme}://") or not parsed.netloc:
            raise BaccaratError(f"{text!r} is not a valid URI: write {scheme}://BUCKET/PREFIX")
        prefix = parsed.path.strip("/")
        if any(part in ("", ".", "..") for part in prefix.split("/")) and prefix:
            raise BaccaratError(f"{text!r}: the prefix may not hold empty, '.' or '..' parts")
        if parsed.query or parsed.fragment:
            raise BaccaratError(f"{text!r}: a URI with '?' or '#' is not a location")
        bucket = parsed.netloc.split("@")[0] if scheme == "abfss" else parsed.netloc
        if scheme in ("s3", "gs") and not _BUCKET.match(bucket):
            raise BaccaratError(f"{text!r}: {bucket!r} is not a valid bucket name")
        return cls(f"{scheme}://{parsed.netloc}" + (f"/{prefix}" if prefix else ""))

    @property
    def scheme(self) -> str:
        return self.uri.split("://", 1)[0] if "://" in self.uri else "file"

    @property
    def is_local(self) -> bool:
        return self.scheme == "file"

    def __str__(self) -> str:
        return self.uri

    # -- locations ---------------------------------------------------------------------------------

    def location(self, *parts: str) -> str:
        """A URI (or local path) under OUT, for people and for deltalake and polars."""
        return "/".join([self.uri.rstrip("/"), *parts])

    def local_path(self, *parts: str) -> Path:
        """A path under a local OUT (for DuckDB's own file reader and the warehouse file)."""
        if not self.is_local:
            raise BaccaratError(f"{self.uri} is not a local folder")
        return Path(self.uri, *parts)

    def fs_path(self, *parts: str) -> str:
        if self.is_local:
            return str(Path(self.uri, *parts))
        _, rest = self.uri.split("://", 1)
        if self.scheme == "abfss":
            container, _, path = rest.partition("@")
            rest = container + ("/" + path.split("/", 1)[1] if "/" in path else "")
        return "/".join([rest.rstrip("/"), *parts])

    @cached_property
    def filesystem(self) -> pafs.FileSystem:
        if self.is_local:
            return pafs.LocalFileSystem()
        if self.scheme == "s3":
            return pafs.S3FileSystem(**_s3_settings(), **_S3_TIMEOUTS,
                                     retry_strategy=pafs.AwsStandardS3RetryStrategy(max_attempts=3))
        if self.scheme == "gs":
            return pafs.GcsFileSystem()
        return pafs.AzureFileSystem(account_name=self._azure_account())

    def _azure_account(self) -> str:
        if self.scheme == "abfss":
            return self.uri.split("@", 1)[1].split(".", 1)[0]
        account = os.environ.get("AZURE_STORAGE_ACCOUNT_NAME")
        if not account:
            raise BaccaratError("az:// needs AZURE_STORAGE_ACCOUNT_NAME in the environment")
        return account

    def _aws_environment(self) -> dict[str, str]:
        if self.scheme != "s3":
            return {}
        names = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
                 "AWS_ENDPOINT_URL", "AWS_ALLOW_HTTP")
        options = {name: os.environ[name] for name in names if os.environ.get(name)}
        if "AWS_REGION" not in options and os.environ.get("AWS_DEFAULT_REGION"):
            options["AWS_REGION"] = os.environ["AWS_DEFAULT_REGION"]
        return options

    @property
    def storage_options(self) -> dict[str, str]:
        """Settings for deltalake (object_store): the standard environment variables, and bounded waits
        (its defaults wait three minutes for an endpoint that never answers)."""
        return self._aws_environment() | (DELTA_TIMEOUTS if not self.is_local else {})

    def polars_options(self) -> dict[str, str] | None:
        return {key.lower(): value for key, value in self._aws_environment().items()} or None

    def duckdb_connection(self, database: str = ":memory:"):
        """A DuckDB connection (to `database`) that reads OUT's files with DuckDB's own Parquet reader:
        on an object store through pyarrow's filesystem (pipeline/duckdb_files.py), so no DuckDB
        extension is needed."""
        import duckdb

        con = duckdb.connect(database, config={"autoinstall_known_extensions": "false",
                                               "autoload_known_extensions": "false"})
        if not self.is_local:
            from pipeline.duckdb_files import duckdb_filesystem

            con.register_filesystem(duckdb_filesystem(self.scheme, self.filesystem))
        return con

    def warehouse_path(self) -> Path:
        """The default warehouse: a local file, inside a local OUT, else in the current folder."""
        return Path(self.uri, WAREHOUSE) if self.is_local else Path(WAREHOUSE).absolute()

    def report_path(self) -> Path:
        return Path(self.uri if self.is_local else ".", "report", "index.html").absolute()

    # -- checks before any work ------------------------------------------------------------------

    def check_writable(self) -> "Store":
        """Create OUT if needed and write and remove a probe, or a one-line error."""
        if self.is_local:
            folder = Path(self.uri)
            if folder.exists() and not folder.is_dir():
                raise BaccaratError(f"output path {folder} is a file, not a folder")
        probe = self.fs_path(f"_write-probe-{os.getpid()}-{uuid.uuid4().hex[:8]}")
        with self._errors("is not writable"):
            if self.is_local:
                Path(self.uri).mkdir(parents=True, exist_ok=True)
            else:
                self._check_bucket()
            with self.filesystem.open_output_stream(probe) as stream:
                stream.write(b"probe")
            self.filesystem.delete_file(probe)
        self.check_layout()
        return self

    def check_readable(self) -> "Store":
        with self._errors("is not readable"):
            if not self.is_local:
                self._check_bucket()
            info = self.filesystem.get_file_info(self.fs_path())
        if self.is_local and info.type != pafs.FileType.Directory:
            raise BaccaratError(f"no output folder {self.uri}")
        self.check_layout()
        return self

    def _check_bucket(self) -> None:
        bucket = self.fs_path().split("/", 1)[0]
        if self.filesystem.get_file_info(bucket).type == pafs.FileType.NotFound:
            raise BaccaratError(f"{self.uri}: bucket {bucket!r} does not exist")

    def check_layout(self) -> None:
        """The layout before Delta Lake (manifests/) is refused, not mixed with the new one; so is a
        table's log holding what is not a file (see _check_log), before any work."""
        if not self.is_local:
            return
        if Path(self.uri, "manifests").is_dir():
            raise BaccaratError(
                f"{self.uri} holds runs in the old layout (manifests/ and plain Parquet folders), which this "
                "version does not read: simulate again into a new folder")
        for table in self.table_names():
            self._check_log(table)

    def _check_log(self, table: str) -> None:
        """A local table's log holds regular files (and folders) only: deltalake would wait forever
        reading a FIFO there."""
        log = Path(self.uri, table, DELTA_LOG)
        try:
            entries = list(os.scandir(log)) if self.is_local else []
        except FileNotFoundError:
            return
        except OSError as error:
            raise StorageError(f"the log of table {table!r}, {log}, is not readable: "
                               f"{error.strerror or error}") from None
        for entry in entries:
            if not (entry.is_file() or entry.is_dir()):
                raise BaccaratError(f"{entry.path} is not a regular file (a FIFO, a socket, a device or a broken "
                                   f"link): the log of table {table!r} may hold only files; move it away")

    @contextlib.contextmanager
    def _errors(self, what: str) -> Iterator[None]:
        try:
            yield
        except BaccaratError:
            raise
        except (OSError, pa.ArrowException) as error:
            raise StorageError(f"output path {self.uri} {what}: {first_line(error)}") from None

    # -- data files ------------------------------------------------------------------------------

    @contextlib.contextmanager
    def create_file(self, table: str, run_id: str, name: str, job: str = "") -> Iterator["HashingStream"]:
        """A new data file `<table>/run_id=<run>/<name>`, hashed while it is written, that appears under
        its name only once complete. On a local disk it is written under a temporary name that carries
        `job` (the writing job's tag) and renamed; for an object store it is kept in memory and
        uploaded whole when complete, so a failed attempt publishes nothing (closing an object-store
        stream would publish what was written so far). Nothing reads it before a commit adds it."""
        relative = f"{table}/{PARTITION}={run_id}/{name}"
        target = self.fs_path(relative)
        folder, _, base = target.rpartition("/")
        if not self.is_local:
            stream = HashingStream(io.BytesIO(), relative)
            yield stream
            with self.filesystem.open_output_stream(target) as upload:
                upload.write(stream.contents())
            return
        written = f"{folder}/{TEMPORARY_PREFIX}{base}.{job}.{uuid.uuid4().hex}.tmp"
        self.filesystem.create_dir(folder, recursive=True)
        stream = HashingStream(self.filesystem.open_output_stream(written), relative)
        try:
            yield stream
            stream.close()
            self.filesystem.move(written, target)
        finally:
            with contextlib.suppress(Exception):
                stream.close()
            with contextlib.suppress(OSError):
                self.filesystem.delete_file(written)

    def remove_temporaries(self, table: str, run_id: str, job: str) -> None:
        """Remove the local temporary files that attempts of job `job` left when they died (a killed
        executor cannot clean up after itself), and any other untouched for STALE_SECONDS; another job's
        file being written is left alone."""
        folder = Path(self.fs_path(table, f"{PARTITION}={run_id}"))
        stale = time.time() - STALE_SECONDS
        for leftover in folder.glob(f"{TEMPORARY_PREFIX}*.tmp") if self.is_local and folder.is_dir() else ():
            with contextlib.suppress(FileNotFoundError):
                if f".{job}." in leftover.name or leftover.stat().st_mtime < stale:
                    leftover.unlink()

    def sha256(self, relative: str) -> str | None:
        """The SHA-256 of the file at `relative` under OUT, or None when it does not exist."""
        digest = hashlib.sha256()
        try:
            with self.filesystem.open_input_stream(self.fs_path(relative)) as stream:
                while block := stream.read(1 << 22):
                    digest.update(block)
        except FileNotFoundError:
            return None
        except (OSError, pa.ArrowException) as error:
            raise StorageError(f"cannot read {self.location(relative)}: {first_line(error)}") from None
        return digest.hexdigest()

    def file_sizes(self, paths: list[str]) -> list[int | None]:
        """The size of each regular file at `paths` (under OUT), None where there is none."""
        with self._errors("is not readable"):
            found = self.filesystem.get_file_info([self.fs_path(path) for path in paths])
        return [info.size if info.type == pafs.FileType.File else None for info in found]

    def settings_names(self) -> list[str]:
        """The environment variables this process takes the store's settings and credentials from
        (names only: their values never leave the process)."""
        return [name for name in _SETTINGS_VARIABLES.get(self.scheme, ()) if os.environ.get(name)]

    def check_reachable_here(self, names: list[str]) -> None:
        """Inside a task: the variables `names` that the driver takes the store's settings from are set
        here too, and OUT answers; else an OSError naming what is missing, before anything is written."""
        host = socket.gethostname()
        if missing := [name for name in names if not os.environ.get(name)]:
            raise PermissionError(f"the executor on {host} lacks {', '.join(missing)}, which the driver uses for "
                                  f"{self.uri}: give them to the executors (spark.executorEnv.NAME)")
        try:
            self.filesystem.get_file_info(self.fs_path())
        except OSError as error:
            raise ConnectionError(f"the executor on {host} cannot reach {self.uri}: {first_line(error)}") from None

    def reader_path(self, relative: str) -> str:
        """The path of a file under OUT as pyarrow's filesystem, DuckDB and polars take it."""
        return self.fs_path(relative) if self.is_local else self.location(relative)

    # -- Delta tables ----------------------------------------------------------------------------

    def delta_table(self, table: str, version: int | None = None):
        """The Delta table OUT/<table> (at `version`), or None when it does not exist yet."""
        from deltalake import DeltaTable
        from deltalake.exceptions import DeltaError

        uri = self.location(table)
        self._check_log(table)
        with self._errors(f"table {table!r} is not readable"):
            if not DeltaTable.is_deltatable(uri, storage_options=self.storage_options):
                return None
            try:
                return DeltaTable(uri, version=version, storage_options=self.storage_options)
            except DeltaError as error:
                raise self._unreadable(table, version, error) from None

    def _unreadable(self, table: str, version: int | None, error: Exception) -> StorageError:
        """Why deltalake cannot read a table (at `version`): a damaged log entry, or a version not there."""
        if damaged := self.damaged_log_entry(table):
            return DamagedLog(table, *damaged)
        if version is not None:
            return StorageError(f"table {table!r} has no readable version {version} ({first_line(error)})")
        return DamagedLog(table, self.location(table, DELTA_LOG), first_line(error))

    # -- a table's log: its damage, and setting the unreadable part aside ------------------------

    def _log_entries(self, table: str) -> dict[str, int]:
        """The commits and checkpoints in a table's log, by file name, with their versions."""
        with self._errors(f"the log of table {table!r} is not readable"):
            infos = self.filesystem.get_file_info(
                pafs.FileSelector(self.fs_path(table, DELTA_LOG), allow_not_found=True))
        return {info.base_name: int(info.base_name[:20]) for info in infos
                if info.type == pafs.FileType.File and _LOG_ENTRY.fullmatch(info.base_name)}

    def damaged_log_entry(self, table: str) -> tuple[str, str] | None:
        """The first entry of a table's log that a reader cannot get past, and what is wrong with it: a
        commit missing between the newest checkpoint and the newest commit, or one that is not JSON
        lines; None when every entry a reader needs is whole."""
        entries = self._log_entries(table)
        commits = sorted(version for name, version in entries.items() if name.endswith(".json"))
        if not commits:
            return None
        checkpoints = [v for name, v in entries.items() if name.endswith(".parquet") and v <= commits[-1]]
        for version in range(max(checkpoints, default=-1) + 1, commits[-1] + 1):
            name = f"{version:020d}.json"
            where = self.location(table, DELTA_LOG, name)
            if name not in entries:
                return where, f"commit {version} of {commits[-1]} is missing"
            try:
                with self.filesystem.open_input_stream(self.fs_path(table, DELTA_LOG, name)) as stream:
                    for line in stream.read().decode().splitlines():
                        if line.strip() and not isinstance(json.loads(line), dict):
                            raise ValueError("not an action")
            except (UnicodeDecodeError, ValueError):
                return where, f"commit {version} is not a Delta commit (JSON lines)"
            except (OSError, pa.ArrowException) as error:
                return where, f"commit {version} is not readable ({first_line(error)})"
        return None

    def set_log_aside(self, table: str) -> str | None:
        """Move the entries of a table's log from its first damaged entry on into a sibling folder,
        `<table>/_delta_log.damaged-<time>`, so that the table reads as its last whole version (none when
        version 0 is the damaged one); returns that folder, or None when the log is whole. Files the
        moved commits added stay where they are: the runs' recorded, verified files are committed
        again by pipeline.repair."""
        damaged = self.damaged_log_entry(table)
        if damaged is None:
            return None
        first = int(damaged[0].rsplit("/", 1)[1][:20])
        aside = f"{DELTA_LOG}.damaged-{int(time.time() * 1000)}"
        moved = [name for name, version in self._log_entries(table).items() if version >= first]
        with self._errors(f"cannot set the damaged log of table {table!r} aside"):
            if self.file_sizes([f"{table}/{DELTA_LOG}/{LAST_CHECKPOINT}"])[0] is not None:
                moved.append(LAST_CHECKPOINT)  # it may name a checkpoint set aside
            self.filesystem.create_dir(self.fs_path(table, aside))
            for name in sorted(moved, reverse=True):  # the newest first: the log has no gap meanwhile
                self.filesystem.move(self.fs_path(table, DELTA_LOG, name), self.fs_path(table, aside, name))
        return self.location(table, aside)

    def partition_files(self, table: str, run_id: str, version: int | None = None) -> list[dict]:
        """The committed files of one run in a table (at `version`): path under OUT, size and rows."""
        return self.committed_files(table, [run_id], version)

    def committed_files(self, table: str, run_ids: list[str], version: int | None = None) -> list[dict]:
        """The committed files of the runs `run_ids` in a table (at `version`), by path."""
        delta = self.delta_table(table, version)
        if delta is None:
            return []
        actions = pa.table(delta.get_add_actions(flatten=True)).to_pylist()
        return sorted(({"path": f"{table}/{a['path']}", "size": a["size_bytes"], "rows": a.get("num_records")}
                       for a in actions if a.get(f"partition.{PARTITION}") in run_ids), key=lambda f: f["path"])

    def run_ids(self, table: str) -> set[str]:
        """The runs that have committed rows in a table."""
        delta = self.delta_table(table)
        return {values[PARTITION] for values in delta.partitions()} if delta is not None else set()

    def written_files(self, table: str) -> dict[str, list[dict]]:
        """The data files in a table's run folders, committed or not (temporaries aside), by run id:
        each with its path under OUT and size, sorted by name."""
        with self._errors(f"table {table!r} is not readable"):
            found = self.filesystem.get_file_info(pafs.FileSelector(self.fs_path(table), recursive=True,
                                                                    allow_not_found=True))
        prefix = self.fs_path(table) + "/"
        files: dict[str, list[dict]] = {}
        for info in sorted(found, key=lambda i: i.path):
            folder, _, name = info.path.removeprefix(prefix).partition("/")
            if (info.type == pafs.FileType.File and folder.startswith(f"{PARTITION}=") and name.endswith(".parquet")
                    and "/" not in name and not name.startswith(TEMPORARY_PREFIX)):
                files.setdefault(folder.removeprefix(f"{PARTITION}="), []).append(
                    {"path": f"{table}/{folder}/{name}", "size": info.size})
        return files

    def read_file_rows(self, path: str) -> pa.Table:
        """The rows of one data file at `path` under OUT."""
        with self._errors(f"cannot read {self.location(path)}"):
            return pq.read_table(self.fs_path(path), filesystem=self.filesystem)

    def read_rows(self, table: str, run_ids: list[str] | None = None, columns: list[str] | None = None
                  ) -> pa.Table | None:
        """The rows of a table (of the runs in `run_ids`, default all; the `columns` it has of those
        named, default all), or None when it does not exist."""
        delta = self.delta_table(table)
        if delta is None:
            return None
        held = pa.schema(delta.schema().to_arrow()).names
        # Read through this store's own filesystem: deltalake's default one is Python code whose buffers
        # Arrow's threads may release after the read returns, which aborts an interpreter that is exiting.
        table_files = pafs.SubTreeFileSystem(self.fs_path(table), self.filesystem)
        with self._errors(f"table {table!r} is not readable"):
            rows = delta.to_pyarrow_table(filters=[(PARTITION, "in", run_ids)] if run_ids else None,
                                          columns=[c for c in columns if c in held] if columns else None,
                                          filesystem=table_files)
        for name in (c for c in columns or () if c not in held):  # a column newer than the table: null
            rows = rows.append_column(name, pa.nulls(rows.num_rows))
        return rows

    def commit_partition(self, table: str, run_id: str, files: list[dict], schema: pa.Schema,
                         transaction: tuple[str, int]) -> int:
        """Replace run `run_id` in OUT/<table> by `files` (paths under OUT, sizes, rows) in one Delta
        commit that records the application transaction `transaction` (app id, version); returns the
        table's version that holds them. When the run already holds exactly these files (a retried
        or duplicated commit), nothing is committed. Lost races are retried on the new snapshot."""
        from deltalake import CommitProperties, Transaction
        from deltalake.exceptions import CommitFailedError, DeltaError
        from deltalake.transaction import AddAction

        uri = self.location(table)
        paths = sorted(f["path"] for f in files)
        with self._errors("is not readable"):
            found = self.filesystem.get_file_info([self.fs_path(path) for path in paths])
        if missing := [p for p, info in zip(paths, found) if info.type != pafs.FileType.File]:
            raise StorageError(f"commit to {uri} refused: {len(missing)} of its files are gone, such as "
                               f"{self.location(missing[0])} (removed by `baccarat vacuum`?)")
        committed_version = None
        for attempt in range(COMMIT_ATTEMPTS):
            try:
                delta = self._open_or_create(table, schema)
                held = [f["path"] for f in self.partition_files(table, run_id)]
                if held == paths:
                    return delta.version() if committed_version is None else committed_version
                if committed_version is not None and not set(paths) & set(held):
                    return committed_version  # a later commit replaced the run: the last writer wins
                # Otherwise commit (again): delta-rs lets two overwrites of a partition that was empty when
                # both read the table land side by side, so a racer's files beside ours are replaced too.
                now = int(time.time() * 1000)
                actions = [AddAction(f["path"].removeprefix(f"{table}/"), f["size"], {PARTITION: run_id}, now,
                                     True, json.dumps({"numRecords": f["rows"]})) for f in files]
                app_id, version = transaction
                delta.create_write_transaction(
                    actions, mode="overwrite", schema=schema, partition_by=[PARTITION],
                    partition_filters=[(PARTITION, "=", run_id)],
                    commit_properties=CommitProperties(app_transactions=[Transaction(app_id, version)]))
                committed_version = self.delta_table(table).version()
            except CommitFailedError:
                # delta-rs takes an overwrite of one partition as reading the whole table: a concurrent
                # commit of another run conflicts with it, so the commit is made again on the new snapshot.
                time.sleep(random.uniform(0.02, 0.1) * (attempt + 1))
            except (DeltaError, OSError, pa.ArrowException) as error:
                raise StorageError(f"commit to {uri} failed: {first_line(error)}") from None
        raise CommitConflict(f"commit to {uri} lost to concurrent commits {COMMIT_ATTEMPTS} times")

    def _open_or_create(self, table: str, schema: pa.Schema):
        from deltalake import DeltaTable

        delta = self.delta_table(table)
        if delta is None:
            DeltaTable.create(self.location(table), schema=schema, partition_by=[PARTITION], mode="ignore",
                              configuration=TABLE_CONFIGURATION, storage_options=self.storage_options)
            delta = self.delta_table(table)
        return delta

    def write_and_commit(self, table: str, run_id: str, name: str, rows: pa.Table, schema: pa.Schema,
                         transaction: tuple[str, int]) -> int:
        """Write `rows` as one file of run `run_id` (without the partition column, which Delta keeps in
        the log) and commit it in place of the run's earlier files; returns the table's version."""
        with self._errors("is not writable"), self.create_file(table, run_id, name) as stream:
            pq.write_table(rows.drop_columns([c for c in rows.column_names if c == PARTITION]), stream,
                           compression="zstd")
        file = {"path": stream.path, "size": stream.size, "rows": rows.num_rows}
        return self.commit_partition(table, run_id, [file], schema, transaction)

    def tables(self) -> list[str]:
        """The Delta tables under OUT: rounds, shoes, runs, banque_rounds and marts/<name>, those that exist."""
        return [name for name in self.table_names() if self.delta_table(name) is not None]

    def table_names(self) -> list[str]:
        """rounds, shoes, runs, banque_rounds and the folders of marts/: where tables are, or may be."""
        with self._errors("is not readable"):
            marts = self.filesystem.get_file_info(pafs.FileSelector(self.fs_path("marts"), allow_not_found=True))
        return ["rounds", "shoes", "runs", "banque_rounds", *sorted(f"marts/{info.base_name}" for info in marts
                                                   if info.type == pafs.FileType.Directory)]

    def vacuum(self, table: str, retention_hours: int, dry_run: bool, keep_versions: list[int]) -> list[str]:
        """Remove the files of a table that no current row and no version in `keep_versions` needs,
        older than `retention_hours` (files of attempts that never committed, replaced runs), then
        checkpoint its log; returns the files removed (or that would be)."""
        if retention_hours < MIN_RETENTION_HOURS:
            raise BaccaratError(f"a retention under {MIN_RETENTION_HOURS} hours could remove a running job's files")
        delta = self.delta_table(table)
        with self._errors(f"table {table!r} cannot be vacuumed"):
            removed = delta.vacuum(retention_hours=retention_hours, dry_run=dry_run, enforce_retention_duration=False,
                                   full=True, keep_versions=sorted(set(keep_versions)) or None)
            if not dry_run:
                delta.create_checkpoint()
        return removed


class HashingStream(io.RawIOBase):
    """An output stream whose SHA-256 and size are known when it is closed, without reading it back;
    `path`: the file's path under OUT."""

    def __init__(self, sink, path: str):
        super().__init__()
        self._sink = sink
        self.path = path
        self.digest = hashlib.sha256()
        self.size = 0

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self.digest.update(data)
        self.size += len(data)
        self._sink.write(data)
        return len(data)

    def close(self) -> None:
        if not self.closed and not isinstance(self._sink, io.BytesIO):
            self._sink.close()
        super().close()

    def contents(self) -> bytes:
        """What was written, when the sink is memory."""
        return self._sink.getvalue()


def _s3_settings() -> dict:
    """pyarrow's S3 settings from the standard AWS environment variables."""
    settings: dict = {}
    if region := os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION"):
        settings["region"] = region
    if endpoint := os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL"):
        parsed = urlparse(endpoint)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise BaccaratError(f"AWS_ENDPOINT_URL {endpoint!r} is not an http(s) URL")
        if parsed.scheme == "http" and os.environ.get("AWS_ALLOW_HTTP", "").lower() != "true":
            raise BaccaratError(f"AWS_ENDPOINT_URL {endpoint!r} is plain http: set AWS_ALLOW_HTTP=true to allow it")
        settings["endpoint_override"] = parsed.netloc
        settings["scheme"] = parsed.scheme
    return settings


def first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__
