"""The Delta Lake tables under OUT (through deltalake): reading a table at a version and its runs'
files, one commit per run and table, and vacuum."""

import contextlib
import json
import random
import re
import shlex
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from pipeline.errors import BaccaratError
from pipeline.storage.delta_log import DELTA_LOG
from pipeline.storage.errors import CommitConflict, DamagedLog, PartitionTaken, StorageError, first_line
from pipeline.storage.layout import partition_column

COMMIT_ATTEMPTS = 8
MIN_RETENTION_HOURS = 24
MAX_RETENTION_HOURS = 1_000_000  # over a century; deltalake panics on a retention past about 10**12 hours
# Runs record the versions of their commits, so the logs that reach them are kept. A checkpoint every 10
# commits (deltalake writes it after the commit) bounds what opening a table reads: the newest checkpoint
# and at most 9 commits after it, each a request on an object store, however many runs the table holds.
CHECKPOINT_INTERVAL = 10
TABLE_CONFIGURATION = {"delta.enableExpiredLogCleanup": "false", "delta.checkpointInterval": str(CHECKPOINT_INTERVAL)}
# A commit's record of the SHA-256 of the files it adds (those a writer hashed), in its commitInfo (Delta's add
# action has no field for it, deltalake no tags): {"modification_time": its add actions', "sha256": {path in
# the table: SHA-256}}. The time tells a file's own commit from an earlier one that added the same path.
CHECKSUMS = "baccarat.checksums"
HISTORY_STEP = 4  # commits whose records are read at first, newest first; four times more each step after
# delta-rs's full vacuum lists every file under the table, and stops at a link that leads back to itself (ELOOP)
_LINK_LOOP = re.compile(r"IO error for operation on (.+?): Too many levels of symbolic links")


# The tables a command keeps open (see DeltaTables.keeping_tables_open): {(OUT, table): DeltaTable}. The
# threads of pipeline.at_once share their caller's; other commands in other threads keep their own.
_KEPT_OPEN: ContextVar[dict | None] = ContextVar("kept_open", default=None)


class DeltaTables:
    """The Delta tables under a Location (a mixin of Store)."""

    @contextlib.contextmanager
    def keeping_tables_open(self) -> Iterator[None]:
        """Within, each table of OUT opened at its newest version is opened once: a later open brings the
        same one up to date, reading only the commits made since (on an object store an open reads the
        newest checkpoint and every commit after it, a request each)."""
        token = _KEPT_OPEN.set({})
        try:
            yield
        finally:
            _KEPT_OPEN.reset(token)

    def _keep(self, table: str, delta) -> None:
        """Keep `delta` open as OUT/<table> (None: forget it), when keeping_tables_open."""
        if (kept := _KEPT_OPEN.get()) is not None:
            kept[(self.uri, table)] = delta

    def _kept(self, table: str):
        return (_KEPT_OPEN.get() or {}).get((self.uri, table))

    def delta_table(self, table: str, version: int | None = None):
        """The Delta table OUT/<table> (at `version`), or None when it does not exist yet."""
        from deltalake import DeltaTable
        from deltalake.exceptions import DeltaError, TableNotFoundError

        uri = self.location(table)
        self._check_log(table)
        with self._errors(f"table {table!r} is not readable"):
            try:
                if version is None and (delta := self._kept(table)) is not None:
                    delta.update_incremental()
                    return delta
                # opened at once: looking for a commit in its log first is one more round trip to a store
                delta = DeltaTable(uri, version=version, storage_options=self.storage_options)
            except TableNotFoundError:  # no commit in its log, or no log
                return None
            except DeltaError as error:
                if not DeltaTable.is_deltatable(uri, storage_options=self.storage_options):
                    return None  # a log holding no commit, such as one left with a checkpoint hint alone
                raise self._unreadable(table, version, error) from None
        if version is None:
            self._keep(table, delta)
        return delta

    def _unreadable(self, table: str, version: int | None, error: Exception) -> StorageError:
        """Why deltalake cannot read a table (at `version`): a damaged log entry, or a version not there."""
        if damaged := self.damaged_log_entry(table):
            return DamagedLog(table, *damaged, self.uri)
        if version is not None:
            return StorageError(f"table {table!r} has no readable version {version} ({first_line(error)})")
        return DamagedLog(table, self.location(table, DELTA_LOG), first_line(error), self.uri)

    def possible_tables(self, tables: list[str]) -> list[str]:
        """Those of `tables` whose folder exists, in order: the others are not tables yet. One listing of
        each parent folder, where looking for each table's log is a request of its own on an object store."""
        folders = set()
        for parent in {table.rpartition("/")[0] for table in tables}:
            with self._errors("is not readable"):
                found = self.filesystem.get_file_info(
                    pafs.FileSelector(self.fs_path(*[parent] if parent else []), allow_not_found=True))
            folders |= {f"{parent}/{info.base_name}".lstrip("/") for info in found
                        if info.type == pafs.FileType.Directory}
        return [table for table in tables if table in folders]

    def tables(self) -> list[str]:
        """The Delta tables under OUT (see table_names), those that exist."""
        return [name for name in self.table_names() if self.delta_table(name) is not None]

    def partition_files(self, table: str, run_id: str, version: int | None = None,
                        checksums: bool = False) -> list[dict]:
        """The committed files of one run in a table (at `version`): path under OUT, size and rows (and
        with `checksums` their recorded SHA-256: see committed_files)."""
        return self.committed_files(table, [run_id], version, checksums)

    def committed_files(self, table: str, run_ids: list[str], version: int | None = None,
                        checksums: bool = False) -> list[dict]:
        """The committed files of the runs `run_ids` in a table (at `version`), by path; with `checksums`,
        each with the SHA-256 its commit recorded ("sha256"; None for a file committed without one, by a
        version of the pipeline before they were recorded, or by a writer that does not hash)."""
        delta = self.delta_table(table, version)
        return [] if delta is None else self._files_in(delta, table, run_ids, checksums)

    @staticmethod
    def _add_actions(delta, run_ids: list[str]) -> list[dict]:
        """The add actions of the runs' files in the table's current version."""
        key = f"partition.{partition_column()}"
        return [a for a in pa.table(delta.get_add_actions(flatten=True)).to_pylist() if a.get(key) in run_ids]

    def _files_in(self, delta, table: str, run_ids: list[str], checksums: bool = False) -> list[dict]:
        actions = self._add_actions(delta, run_ids)
        recorded = self._recorded_checksums(delta, table, {(a["path"], a["modification_time"]) for a in actions}) \
            if checksums and actions else None
        files = [{"path": f"{table}/{a['path']}", "size": a["size_bytes"], "rows": a.get("num_records")}
                 | ({} if recorded is None else {"sha256": recorded.get((a["path"], a["modification_time"]))})
                 for a in actions]
        return sorted(files, key=lambda f: f["path"])

    def _recorded_checksums(self, delta, table: str, added: set[tuple[str, int]]) -> dict[tuple[str, int], str]:
        """The SHA-256 the commits recorded (CHECKSUMS) of the files added as `added` (path in the table,
        modification time), read from the newest commit back until every one is found."""
        found = {}
        for commits in self._history_batches(delta, table):
            for commit in commits:
                record = commit.get(CHECKSUMS)
                if isinstance(record, dict) and isinstance(record.get("sha256"), dict):
                    for path, digest in record["sha256"].items():
                        found.setdefault((path, record.get("modification_time")), digest)
            if added <= found.keys():
                break
        return {key: found[key] for key in added if key in found}

    def commit_record(self, table: str, run_id: str, key: str):
        """What the commit that added the run's files of `table` recorded under `key` (commit_partition's
        `metadata`), read from the newest commit back; None when it recorded none (a commit by a version of
        the pipeline before, or a repair's), or the table holds no file of the run."""
        delta = self.delta_table(table)
        added = {a["modification_time"] for a in self._add_actions(delta, [run_id])} if delta is not None else set()
        for commits in self._history_batches(delta, table) if added else ():
            for commit in commits:
                record = commit.get(key)
                if isinstance(record, dict) and record.get("modification_time") in added:
                    return record.get("value")
        return None

    def _history_batches(self, delta, table: str) -> Iterator[list[dict]]:
        """The table's commits, newest first: the first HISTORY_STEP, then four times as many each step (each
        batch holds the one before), until a batch holds the log's first commit."""
        from deltalake.exceptions import DeltaError

        limit = HISTORY_STEP
        while True:
            with self._errors(f"table {table!r} is not readable"):
                try:
                    commits = delta.history(limit)
                except DeltaError as error:
                    raise StorageError(f"the log of table {table!r} is not readable: {first_line(error)}") from None
            yield commits
            if len(commits) < limit:
                return
            limit *= 4

    def run_ids(self, table: str) -> set[str]:
        """The runs that have committed rows in a table."""
        delta = self.delta_table(table)
        return {values[partition_column()] for values in delta.partitions()} if delta is not None else set()

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
            rows = delta.to_pyarrow_table(filters=[(partition_column(), "in", run_ids)] if run_ids else None,
                                          columns=[c for c in columns if c in held] if columns else None,
                                          filesystem=table_files)
        for name in (c for c in columns or () if c not in held):  # a column newer than the table: null
            rows = rows.append_column(name, pa.nulls(rows.num_rows))
        return rows

    def commit_partition(self, table: str, run_id: str, files: list[dict], schema: pa.Schema,
                         transaction: tuple[str, int], may_replace: Callable[[list[str]], bool] | None = None,
                         metadata: dict | None = None) -> int:
        """Replace run `run_id` in OUT/<table> by `files` (paths under OUT, sizes, rows) in one Delta
        commit that records the application transaction `transaction` (app id, version); returns the
        table's version that holds them. When the run already holds exactly these files (a retried
        or duplicated commit), nothing is committed. Lost races are retried on the new snapshot.
        `may_replace(paths)`, when given, decides whether the run's other files may be replaced: when
        not, PartitionTaken, and the run's files are the others alone. `metadata` ({key: value}) is recorded
        in the commit beside the files (commit_record reads it)."""
        from deltalake.exceptions import CommitFailedError, DeltaError

        uri = self.location(table)
        paths = sorted(f["path"] for f in files)
        self._check_files_there(uri, paths)
        delta, committed_version = self._last_read(table, run_id, paths), None
        for attempt in range(COMMIT_ATTEMPTS):
            try:
                if delta is None:
                    delta = self._open_or_create(table, schema)
                held = [f["path"] for f in self._files_in(delta, table, [run_id])]
                if held == paths and (committed_version is not None  # these files, as this call committed them
                                      or self._holds_checksums(delta, table, run_id, files)):
                    return delta.version() if committed_version is None else committed_version
                if committed_version is not None and not set(paths) & set(held):
                    return committed_version  # a later commit replaced the run: the last writer wins
                if may_replace is not None and not may_replace(others := [p for p in held if p not in paths]):
                    self._give_way(delta, table, run_id, others, schema, transaction, committed_version is not None)
                # Otherwise commit (again): delta-rs lets two overwrites of a partition that was empty when
                # both read the table land side by side, so a racer's files beside ours are replaced too.
                self._overwrite_partition(delta, table, run_id, files, schema, transaction, metadata)
                delta.update_incremental()  # the next pass checks the run's files on the table as it is now
                committed_version = delta.version()
            except CommitFailedError:
                delta = None
                # delta-rs takes an overwrite of one partition as reading the whole table: a concurrent
                # commit of another run conflicts with it, so the commit is made again on the new snapshot.
                time.sleep(random.uniform(0.02, 0.1) * (attempt + 1))
            except (DeltaError, OSError, pa.ArrowException) as error:
                raise StorageError(f"commit to {uri} failed: {first_line(error)}") from None
        raise CommitConflict(f"commit to {uri} lost to concurrent commits {COMMIT_ATTEMPTS} times")

    def _give_way(self, delta, table: str, run_id: str, others: list[str], schema: pa.Schema,
                  transaction: tuple[str, int], landed: bool) -> None:
        """PartitionTaken, once the run's files are `others` alone: a commit of ours that `landed` beside
        them (delta-rs lets two overwrites of a partition both read empty land side by side) is taken out."""
        if landed:
            kept = [f for f in self._files_in(delta, table, [run_id], checksums=True) if f["path"] in others]
            self._overwrite_partition(delta, table, run_id, kept, schema, transaction)
        raise PartitionTaken(f"run {run_id!r} in {self.location(table)} holds files another command committed "
                             f"while this one ran, such as {self.location(others[0])}")

    def _last_read(self, table: str, run_id: str, paths: list[str]):
        """The table as this command last read it (keeping_tables_open), to commit the run's files on: a
        racer's commit since then fails ours, which is then made again on the new snapshot. None, to read
        the table as it is now, when there is none or it holds these very files for the run."""
        delta = self._kept(table)
        if delta is None or [f["path"] for f in self._files_in(delta, table, [run_id])] == paths:
            return None
        return delta

    def _holds_checksums(self, delta, table: str, run_id: str, files: list[dict]) -> bool:
        """Whether the run's committed files (those of `files`) have the SHA-256 `files` carry recorded: a
        file written again in place with other bytes is committed again, its new checksum with it."""
        written = {f["path"]: f["sha256"] for f in files if f.get("sha256")}
        return not written or all(written.get(f["path"]) == f["sha256"]
                                  for f in self._files_in(delta, table, [run_id], checksums=True))

    def _check_files_there(self, uri: str, paths: list[str]) -> None:
        with self._errors("is not readable"):
            found = self.filesystem.get_file_info([self.fs_path(path) for path in paths])
        if missing := [p for p, info in zip(paths, found) if info.type != pafs.FileType.File]:
            raise StorageError(f"commit to {uri} refused: {len(missing)} of its files are gone, such as "
                               f"{self.location(missing[0])} (removed by `baccarat vacuum`?)")

    @staticmethod
    def _overwrite_partition(delta, table: str, run_id: str, files: list[dict], schema: pa.Schema,
                             transaction: tuple[str, int], metadata: dict | None = None) -> None:
        """One commit of `files` in place of the run's partition, recording the application transaction, and
        each value of `metadata` with the time of the commit's add actions (which tells this commit's record
        from an earlier one's, as for the checksums)."""
        from deltalake import CommitProperties, Transaction
        from deltalake.transaction import AddAction

        partition, now = partition_column(), int(time.time() * 1000)
        actions = [AddAction(f["path"].removeprefix(f"{table}/"), f["size"], {partition: run_id}, now,
                             True, json.dumps({"numRecords": f["rows"]})) for f in files]
        hashed = {f["path"].removeprefix(f"{table}/"): f["sha256"] for f in files if f.get("sha256")}
        recorded = ({CHECKSUMS: {"modification_time": now, "sha256": hashed}} if hashed else {}) | {
            key: {"modification_time": now, "value": value} for key, value in (metadata or {}).items()}
        app_id, version = transaction
        delta.create_write_transaction(
            actions, mode="overwrite", schema=schema, partition_by=[partition],
            partition_filters=[(partition, "=", run_id)],
            commit_properties=CommitProperties(custom_metadata=recorded or None,
                                               app_transactions=[Transaction(app_id, version)]))

    def _open_or_create(self, table: str, schema: pa.Schema):
        from deltalake import DeltaTable

        delta = self.delta_table(table)
        if delta is None:  # created, or opened when a racer created it first
            delta = DeltaTable.create(self.location(table), schema=schema, partition_by=[partition_column()],
                                      mode="ignore", configuration=TABLE_CONFIGURATION,
                                      storage_options=self.storage_options)
            self._keep(table, delta)
        return delta

    def write_file(self, table: str, run_id: str, name: str, rows: pa.Table) -> dict:
        """Write `rows` as one file of run `run_id` (without the partition column, which Delta keeps in
        the log), not committed; returns its entry (path under OUT, size, rows, SHA-256) for commit_partition,
        which records the checksum in the commit."""
        with self._errors("is not writable"), self.create_file(table, run_id, name) as stream:
            pq.write_table(rows.drop_columns([c for c in rows.column_names if c == partition_column()]), stream,
                           compression="zstd")
        return {"path": stream.path, "size": stream.size, "rows": rows.num_rows, "sha256": stream.digest.hexdigest()}

    def write_and_commit(self, table: str, run_id: str, name: str, rows: pa.Table, schema: pa.Schema,
                         transaction: tuple[str, int]) -> int:
        """Write `rows` as one file of run `run_id` and commit it in place of the run's earlier files;
        returns the table's version."""
        return self.commit_partition(table, run_id, [self.write_file(table, run_id, name, rows)], schema, transaction)

    def removed_files(self, table: str) -> set[str]:
        """The files of a table, by path under OUT, that a commit took out of it (a run's rows replaced or
        dropped) and that `vacuum` has not deleted yet."""
        from deltalake.exceptions import DeltaError

        delta = self.delta_table(table)
        with self._errors(f"table {table!r} is not readable"):
            try:
                removed = [] if delta is None else delta.vacuum(retention_hours=0, dry_run=True,
                                                                enforce_retention_duration=False)
            except DeltaError as error:
                raise _cannot_vacuum(table, error) from None
        return {f"{table}/{path}" for path in removed}

    def vacuum(self, table: str, retention_hours: int, dry_run: bool, keep_versions: list[int]) -> list[str]:
        """Remove the files of a table that no current row and no version in `keep_versions` needs,
        older than `retention_hours` (files of attempts that never committed, replaced runs), then
        checkpoint its log; returns the files removed (or that would be)."""
        if retention_hours < MIN_RETENTION_HOURS:
            raise BaccaratError(f"a retention under {MIN_RETENTION_HOURS} hours could remove a running job's files")
        from deltalake.exceptions import DeltaError

        delta = self.delta_table(table)
        with self._errors(f"table {table!r} cannot be vacuumed"):
            try:
                removed = delta.vacuum(retention_hours=retention_hours, dry_run=dry_run, enforce_retention_duration=False,
                                       full=True, keep_versions=sorted(set(keep_versions)) or None)
                if not dry_run:
                    delta.create_checkpoint()
            except DeltaError as error:
                raise _cannot_vacuum(table, error) from None
        return removed


def _cannot_vacuum(table: str, error: Exception) -> StorageError:
    """The one line for a vacuum delta-rs failed; a symbolic link loop in the table's folder (`ln -s loop loop`),
    which it cannot list past, named with what to do about it."""
    said = first_line(error)
    if loop := _LINK_LOOP.search(said):
        return StorageError(f"table {table!r} cannot be vacuumed: {loop[1]} is a symbolic link in a loop (it leads "
                            f"back to itself), which vacuum cannot list past: remove the link (rm "
                            f"{shlex.quote(loop[1])}) and vacuum again")
    return StorageError(f"table {table!r} cannot be vacuumed: {said}")
