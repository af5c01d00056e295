"""Publishing marts: conform each table to its contract, commit it per run to its Delta table, and
publish the DuckDB warehouse as a new local file behind a stable path (publish_warehouse)."""

import contextlib
import fcntl
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa

from pipeline.bets import BET_KINDS
from pipeline.at_once import each_at_once
from pipeline.atomic import replacing, temporary_name, untouched_for
from pipeline.errors import BaccaratError, WorldFailure
from pipeline.marts.inputs import (COMPOSITION_MARTS, EVERY_MART, MARTS, SYSTEM_MARTS, RunInput, load_run,
                                   replaced_since_read)
from pipeline.marts.warehouse import (PUBLISHES, holds_other_data, journal, may_be_replaced, seal, sql_list,
                                      sql_string)
from pipeline.orphans import orphan_problem, orphan_runs
from pipeline.runs import RUNS, DamagedRun, RunRecord, committed_runs, read_run
from pipeline.schemas import contract
from pipeline.storage import STALE_SECONDS, WAREHOUSE, PartitionTaken, StorageError, Store
from pipeline.termination import stops_held
from pipeline.user_files import check_outside_tables, special_file


def conform(table: pa.Table, name: str, run: RunInput) -> pa.Table:
    """The table as its contract says: run_id and rules first, every column cast, absent bets null."""
    schema = contract(name).arrow(tuple(BET_KINDS))
    rows = table.num_rows
    given = {"run_id": run.run_id, "rules": run.rule_set.name}
    columns = []
    for field in schema:
        if field.name in given:
            columns.append(pa.repeat(pa.scalar(given[field.name], field.type), rows))
        elif field.name in table.column_names:
            columns.append(table[field.name].cast(field.type))
        else:
            columns.append(pa.nulls(rows, field.type))
    return pa.Table.from_arrays(columns, schema=schema)


# Marts of one row per shoe: the range tasks write their files (pipeline/marts/partials.py), and a
# warehouse on a local OUT reads them through a view, as it reads the rounds, not a copy that grows with the runs.
PER_SHOE_MARTS = ("shoe_summary",)


@dataclass(frozen=True)
class WrittenMart:
    """A mart's rows of one run as files already written, conformed and not committed (write_part): each
    file's path under OUT, size and rows."""

    files: tuple[dict, ...]


def write_part(run: RunInput, name: str, rows: pa.Table, file_name: str) -> pa.Table:
    """Write part of mart `name`'s rows of one run, conformed to its contract, as file `file_name` of the
    run, not committed; its entry (path, size, rows, SHA-256) as a one-row table."""
    written = run.out.write_file(contract(name).table, run.run_id, file_name, conform(rows, name, run))
    return pa.Table.from_pylist([written], pa.schema({"path": pa.string(), "size": pa.int64(), "rows": pa.int64(),
                                                      "sha256": pa.string()}))


def write_marts(run: RunInput, tables: dict[str, pa.Table | WrittenMart]) -> tuple[str, ...]:
    """Commit every mart of one run: each commit replaces the run's earlier rows of that mart whole (a
    WrittenMart by its files, once every mart's files are found whole). A composition or system mart
    missing from `tables` (the run has no round_ev or sessions rows) keeps none of the run's rows. The
    marts are separate Delta tables, so their commits run side by side (on an object store each is a few
    round trips); a stop waits for the last of them, so that no run is left with only some of its marts.
    Returns the marts taken back (_taken_back)."""
    built = int(datetime.now(UTC).timestamp() * 1000)
    written = [file for mart in tables.values() if isinstance(mart, WrittenMart) for file in mart.files]
    try:
        run.out.check_written(written)
    except StorageError as error:
        raise StorageError(f"the marts of run {run.run_id!r} were not committed: {error}") from None

    droppable = _possible_marts(run.out, [name for name in COMPOSITION_MARTS + SYSTEM_MARTS if name not in tables])

    def commit(name: str) -> list[str]:
        if name in tables:
            return _commit(run, name, tables[name], built)
        if name in droppable:
            _drop(run.out, name, run.run_id, built)
        return []

    with stops_held(then_stop=True):
        return _taken_back(run, dict(zip(EVERY_MART, each_at_once(commit, EVERY_MART))), built)


def _commit(run: RunInput, name: str, mart: pa.Table | WrittenMart, built: int) -> list[str]:
    """Commit one mart of a run; the paths of its files."""
    table = contract(name).table
    files = list(mart.files) if isinstance(mart, WrittenMart) else [run.out.write_file(
        table, run.run_id, f"part-{built}-{uuid.uuid4().hex[:8]}.parquet", conform(mart, name, run))]
    run.out.commit_partition(table, run.run_id, files, contract(name).table_schema(tuple(BET_KINDS)),
                             (f"baccarat-marts:{run.run_id}", built))
    return [f["path"] for f in files]


def _taken_back(run: RunInput, committed: dict[str, list[str]], built: int) -> tuple[str, ...]:
    """The marts built from rows of the run that another command replaced while they were built (inputs.
    replaced_since_read), their files taken out again where they are still the run's rows there: that
    command removes the run's marts once, after its own commit, which may have been before these."""
    stale = replaced_since_read(run)
    each_at_once(lambda name: _drop(run.out, name, run.run_id, built, committed[name]),
                 [name for name in stale if committed[name]])
    return stale


def drop_marts(out: Store, run_id: str, names: tuple[str, ...] = EVERY_MART) -> bool:
    """Remove a run's rows from the marts `names` (by default every mart): they describe rows of the run
    that were replaced. Returns whether any of them held the run's rows."""
    dropped = int(datetime.now(UTC).timestamp() * 1000)
    return any(each_at_once(lambda name: _drop(out, name, run_id, dropped), _possible_marts(out, names)))


def _possible_marts(out: Store, names) -> list[str]:
    """Those of the marts `names` whose tables may exist (Store.possible_tables)."""
    possible = set(out.possible_tables([contract(name).table for name in names]))
    return [name for name in names if contract(name).table in possible]


def _drop(out: Store, name: str, run_id: str, when: int, only: Iterable[str] | None = None) -> bool:
    """Remove a run's rows from mart `name` (only when its files there are among `only`, when given: a later
    build's stay); whether the mart held any."""
    table = contract(name).table
    if held := run_id in out.run_ids(table):
        try:
            out.commit_partition(table, run_id, [], contract(name).table_schema(tuple(BET_KINDS)),
                                 (f"baccarat-marts:{run_id}", when), None if only is None else set(only).issuperset)
        except PartitionTaken:
            pass
    return held


def read_shoe_rounds(out: Store, run: RunRecord, shoe_id: int, columns: list[str]) -> pl.DataFrame:
    """The rounds of one shoe of a committed run, in order, from the files its runs row lists."""
    paths = [out.reader_path(f.path) for f in run.files_over("rounds", shoe_id, shoe_id + 1)]
    if not paths:
        return pl.DataFrame(schema={c: pl.Null for c in columns})
    return (pl.scan_parquet(paths, hive_partitioning=False, storage_options=out.polars_options())
            .filter(pl.col("shoe_id") == shoe_id).select(columns).sort("round").collect())


# The oldest storage version DuckDB 2.0 writes, which DuckDB 1.0 and later read; DuckDB 2.0's default,
# v2.0.0, no DuckDB 1.x can open ("Trying to read a database file with version number 69").
STORAGE_VERSION = "v1.0.0"
PUBLISHING = ".publishing"  # the lock file in a publish's own folder while it publishes


def check_warehouse_path(target: Path) -> Path:
    """The warehouse's path made absolute, once it is known to name a file a publish may write or replace,
    outside the tables; else a one-line error. Nothing is created (`baccarat run` checks it before it
    deals: `run --warehouse /tmp` committed the run, then refused the folder)."""
    target = Path(target).absolute()
    if "?" in str(target):
        # DuckDB names the write-ahead log by putting '.wal' before the first '?' ('/a?b/w.duckdb' has
        # '/a.wal?b/w.duckdb'), so its first commit fails: marts committed the marts, then exited 1
        raise BaccaratError(f"the warehouse {target}: DuckDB cannot write a database whose path holds '?': "
                            "give another path (--warehouse), or another folder")
    if not target.name or target.is_dir():
        raise BaccaratError(f"the warehouse {target} is a folder: give the path of a file, such as {target / WAREHOUSE}")
    if kind := special_file(target):  # never opened to see whether it is a DuckDB file: a FIFO would block
        raise BaccaratError(f"the warehouse {target} is {kind}: it is left as it is; give the path of a file, such "
                            f"as {target.parent / WAREHOUSE}")
    check_outside_tables(target, "the warehouse")
    if not may_be_replaced(target):
        what = ("a DuckDB database that is not a warehouse (it holds tables, none of them a mart)"
                if holds_other_data(target) else "a file that is not a DuckDB database")
        raise BaccaratError(f"the warehouse {target} is {what}: it is left as it is; give another path, such as "
                            f"{target.parent / WAREHOUSE}")
    return target


def check_warehouse_target(target: Path) -> Path:
    """check_warehouse_path, and its folder made and known to be writable by this process, and so the folder of
    its publishes when there is one (read-only, or a file); else a one-line error, before anything is built
    or committed."""
    target = check_warehouse_path(target)
    publishes = target.with_name(target.name + PUBLISHES)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        for folder in [target.parent, *([publishes] if os.path.lexists(publishes) else [])]:
            with tempfile.TemporaryFile(dir=folder):
                pass
    except OSError as error:
        raise BaccaratError(f"cannot write the warehouse {target}: {error.strerror or error}") from None
    return target


def _left_out(run_id: str, problem: str) -> str:
    return f"run {run_id!r} left out of the warehouse: {problem.removeprefix(f'run {run_id!r}: ')}"


def publish_warehouse(out: Store, target: Path, verified: frozenset[str] = frozenset()) -> tuple[Path, list[str]]:
    """Build the warehouse anew from the marts of every committed run that passes its checks (runs in
    `verified` were just checked), as a new read-only file in a folder of its own in `<target>.publishes`,
    then point `target` (a symbolic link) at it and remove the older files and any journal a client left
    at `target`. A reader holding an old file open keeps reading it; a client that opened `target`
    read-write can change neither the new file nor what the pipeline's readers see. Rounds and shoes are
    views over the runs' files, named relative to the target's folder, when OUT is local. Returns the path
    and a line for each run left out (a run the runs table lost too: pipeline/orphans.py)."""
    target = check_warehouse_target(target)
    folder = target.with_name(target.name + PUBLISHES)
    with _one_publish_at_a_time(folder, target):
        left_out = _publish(out, target, folder, verified)
    with contextlib.suppress(OSError):
        journal(target).unlink(missing_ok=True)
    return target, left_out


def _publish(out: Store, target: Path, folder: Path, verified: frozenset[str]) -> list[str]:
    runs, records = [], {}
    left_out = [_left_out(o.run_id, orphan_problem(out, o)) for o in orphan_runs(out, out.run_ids(RUNS))]
    for run_id in sorted(set(committed_runs(out)) & out.run_ids(contract(MARTS[0]).table)):
        try:
            records[run_id] = load_run(out, run_id).record if run_id not in verified else read_run(out, run_id)
            runs.append(run_id)
        except (BaccaratError, DamagedRun) as error:
            left_out.append(_left_out(run_id, str(error)))
    # a folder per publish keeps the file's name, which DuckDB makes the database's (the catalog BI tools see)
    published = folder / f"{datetime.now(UTC):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:8]}" / target.name
    try:
        with _publishing(published.parent):
            with replacing(published, sidecars=(".wal",)) as building:
                _build(out, building, target.parent, runs, records)
            published.chmod(0o444)
            seal(published)
            _point(target, published)
            _remove_older_publishes(target, published)
    except BaseException as error:  # a stop too: its folder would stay until a publish 10 minutes later
        if not _points_at(target, published):
            shutil.rmtree(published.parent, ignore_errors=True)
        if isinstance(error, (OSError, duckdb.Error)):  # a full disk reaches DuckDB as an I/O or a commit error
            # the world's: check_warehouse_target refused a path that cannot be written before anything was built
            raise _unwritable(target, error) from None
        raise
    return left_out


def _points_at(target: Path, published: Path) -> bool:
    """Whether `target` is the link to `published`: readers may have it open, so it stays."""
    return _linked(target) == published


def _linked(target: Path) -> Path | None:
    """The published file the link `target` points at; None before the first publish."""
    return target.parent / os.readlink(target) if target.is_symlink() else None


def _unwritable(target: Path, error: Exception) -> WorldFailure:
    return WorldFailure(f"cannot write the warehouse {target}: "
                        f"{getattr(error, 'strerror', None) or str(error).splitlines()[0]}")


@contextlib.contextmanager
def _one_publish_at_a_time(folder: Path, target: Path) -> Iterator[None]:
    """One publish of `target` at a time reads the marts and points `target`, so that the last to point it
    read them last: a publish that read marts another command then took back or removed (and published
    again without them) could otherwise point `target` after that command's publish."""
    try:
        folder.mkdir(exist_ok=True)
        held = os.open(folder, os.O_RDONLY)  # the folder itself is locked: a lock file would be left behind
    except OSError as error:
        raise _unwritable(target, error) from None
    try:
        fcntl.flock(held, fcntl.LOCK_EX)
        yield
    finally:
        os.close(held)


def _build(out: Store, building: Path, base: Path, runs: list[str], records: dict[str, RunRecord]) -> None:
    possible = _possible_marts(out, EVERY_MART)
    files = each_at_once(lambda name: out.committed_files(contract(name).table, runs) if name in possible else [],
                         EVERY_MART)
    marts = {name: [out.reader_path(f["path"]) for f in held] for name, held in zip(EVERY_MART, files)}
    with out.duckdb_connection() as con, _read_here(out, [path for files in marts.values() for path in files]) as here:
        con.execute(f"SET file_search_path = {sql_string(str(base))}")
        con.execute(f"ATTACH {sql_string(str(building))} AS warehouse (STORAGE_VERSION '{STORAGE_VERSION}')")
        con.execute("USE warehouse")
        for name, files in marts.items():
            viewed = out.is_local and name in PER_SHOE_MARTS and files
            paths = [os.path.relpath(f, base) if viewed else here[f] for f in files]
            columns = ", ".join(contract(name).arrow(tuple(BET_KINDS)).names)
            source = f"(SELECT {columns} FROM {_scan(paths)})" if files else _empty(name)
            con.execute(f"CREATE {'VIEW' if viewed else 'TABLE'} {name} AS SELECT * FROM {source}")
        if out.is_local:
            for table in ("rounds", "shoes"):
                files = [os.path.relpath(out.reader_path(f.path), base)
                         for run_id in runs for f in records[run_id].files_of(table)]
                source = _scan(files) if files else _empty(table)
                con.execute(f"CREATE VIEW {table} AS SELECT * FROM {source}")
        con.execute("CHECKPOINT warehouse")  # a checkpoint that fails at close is silent, its journal then lost


def _scan(paths: list[str]) -> str:
    """DuckDB's scan of Parquet files of OUT's tables, the run_id column from their folders' names."""
    return f"read_parquet({sql_list(paths)}, hive_partitioning = true, union_by_name = true)"


@contextlib.contextmanager
def _read_here(out: Store, reader_paths: list[str]) -> Iterator[dict[str, str]]:
    """Where DuckDB reads each of OUT's files at `reader_paths`: in place on a local OUT; else a copy of
    it fetched with one request (DuckDB reads an object store only through a Python file object, a few
    bytes at a time), laid out as OUT so that the `run_id=` folders still name each file's run."""
    if out.is_local:
        yield {path: path for path in reader_paths}
        return
    with out.local_copies(reader_paths) as copies:
        yield {path: copy for path, (copy, _) in copies.items()}


@contextlib.contextmanager
def _publishing(folder: Path) -> Iterator[None]:
    """A new publish's folder, locked while its file is written and `target` pointed at it, so that a
    publish running at the same time does not take it for an older one and remove it."""
    folder.mkdir(parents=True)
    lock = folder / PUBLISHING
    with open(lock, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        try:
            yield
        finally:
            lock.unlink(missing_ok=True)


def _in_progress(folder: Path) -> bool:
    """Whether another publish holds the folder's lock (a publish that died holds none)."""
    try:
        with open(folder / PUBLISHING) as lock:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:  # no lock: an older publish's folder, or one whose publish has ended
        pass
    return False


def _remove_older_publishes(target: Path, published: Path) -> None:
    """Every publish's folder but this one, the one `target` points at now (another `baccarat marts` may
    have published meanwhile) and those another publish is still writing; a folder whose file is not
    written yet only once it is stale."""
    current = (_linked(target) or published).parent
    for publish in published.parent.parent.iterdir():
        finished = (publish / target.name).exists()
        if publish not in (published.parent, current) and (finished or untouched_for(publish, STALE_SECONDS)) and not _in_progress(publish):
            shutil.rmtree(publish, ignore_errors=True)


def _point(target: Path, published: Path) -> None:
    """Make `target` a symbolic link to `published`, relative (the folder can move), in one rename."""
    link = temporary_name(target)
    try:
        os.symlink(os.path.relpath(published, target.parent), link)
        os.replace(link, target)
    finally:
        with contextlib.suppress(OSError):
            link.unlink(missing_ok=True)


def _empty(name: str) -> str:
    """A typed, empty relation for a table no run has yet."""
    columns = ", ".join(f"CAST(NULL AS {_duckdb_type(f.type)}) AS {f.name}"
                        for f in contract(name).table_schema(tuple(BET_KINDS)))
    return f"(SELECT {columns} LIMIT 0)"


def _duckdb_type(arrow_type: pa.DataType) -> str:
    if pa.types.is_decimal(arrow_type):
        return f"DECIMAL({arrow_type.precision}, {arrow_type.scale})"
    return {pa.string(): "VARCHAR", pa.int8(): "TINYINT", pa.int16(): "SMALLINT", pa.int32(): "INTEGER",
            pa.int64(): "BIGINT", pa.uint64(): "UBIGINT", pa.bool_(): "BOOLEAN", pa.float64(): "DOUBLE"}[arrow_type]
