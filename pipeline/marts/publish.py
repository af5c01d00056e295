"""Publishing marts: conform each table to its contract, write it per run, and publish the
DuckDB warehouse by building a new file and renaming it over the old one."""

import os
import shutil
import uuid
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.bets import BET_KINDS
from pipeline.errors import BaccaratError
from pipeline.marts.inputs import MARTS, RunInput, load_run
from pipeline.runs import TEMPORARY_PREFIX, committed_runs, read_manifest
from pipeline.schemas import contract

WAREHOUSE = "warehouse.duckdb"
PART = "part-0.parquet"


def conform(table: pa.Table, name: str, run: RunInput) -> pa.Table:
    """The table as its contract says: run_id and rules first, every column cast, absent bets null."""
    schema = contract(name).arrow(tuple(BET_KINDS))
    rows = table.num_rows
    given = {"run_id": run.run_id, "rules": run.rule_set.name}
    columns = []
    for field in schema:
        if field.name in given:
            columns.append(pa.array([given[field.name]] * rows, field.type))
        elif field.name in table.column_names:
            columns.append(table[field.name].cast(field.type))
        else:
            columns.append(pa.nulls(rows, field.type))
    return pa.Table.from_arrays(columns, schema=schema)


def mart_folder(out: Path, name: str, run_id: str) -> Path:
    return out / contract(name).path.format(run_id=run_id)


def write_marts(run: RunInput, tables: dict[str, pa.Table]) -> None:
    """Write every mart of one run; each folder is replaced whole by a rename, never half-written."""
    for name in MARTS:
        target = mart_folder(run.out, name, run.run_id)
        staging = target.with_name(f"{TEMPORARY_PREFIX}{target.name}.{uuid.uuid4().hex}")
        staging.mkdir(parents=True)
        pq.write_table(conform(tables[name], name, run), staging / PART, compression="zstd")
        retired = target.with_name(f"{TEMPORARY_PREFIX}{target.name}.old-{uuid.uuid4().hex}")
        if target.exists():
            target.rename(retired)
        staging.rename(target)
        shutil.rmtree(retired, ignore_errors=True)


def _parquet_list(paths: list[Path]) -> str:
    return "[" + ", ".join("'" + str(p.resolve()).replace("'", "''") + "'" for p in paths) + "]"


def publish_warehouse(out: Path, verified: frozenset[str] = frozenset()) -> tuple[Path, list[str]]:
    """Build DIR/warehouse.duckdb anew from the marts of every committed run that passes its
    checks (runs in `verified` were just checked), then rename it over the old one: a reader
    holding the old file open keeps reading the old file. Returns the path and a line for each
    run left out."""
    runs, left_out = [], []
    for run_id in committed_runs(out):
        if (mart_folder(out, MARTS[0], run_id) / PART).exists():
            try:
                if run_id not in verified:
                    load_run(out, run_id)
                runs.append(run_id)
            except BaccaratError as error:
                left_out.append(f"run {run_id!r} left out of the warehouse: {error}")
    target = out / WAREHOUSE
    building = out / f"{TEMPORARY_PREFIX}{WAREHOUSE}.{uuid.uuid4().hex}.tmp"
    try:
        with duckdb.connect(str(building)) as con:
            for name in MARTS:
                files = [mart_folder(out, name, run_id) / PART for run_id in runs]
                source = f"read_parquet({_parquet_list(files)})" if files else _empty(name)
                con.execute(f"CREATE TABLE {name} AS SELECT * FROM {source}")
            for table in ("rounds", "shoes"):
                files = [out / f["path"] for run_id in runs for f in read_manifest(out, run_id)["files"]
                         if f["table"] == table]
                source = (f"read_parquet({_parquet_list(files)}, hive_partitioning = true, union_by_name = true)"
                          if files else _empty(table))
                con.execute(f"CREATE VIEW {table} AS SELECT * FROM {source}")
        os.replace(building, target)
    finally:
        building.unlink(missing_ok=True)
    return target, left_out


def open_warehouse(out: Path) -> duckdb.DuckDBPyConnection:
    """The published warehouse, read-only, or a one-line error saying how to make it."""
    path = out / WAREHOUSE
    if not path.is_file():
        raise BaccaratError(f"no warehouse at {path} (run `baccarat marts --out {out}` first)")
    return duckdb.connect(str(path), read_only=True)


def _empty(name: str) -> str:
    """A typed, empty relation for a table no run has yet."""
    columns = ", ".join(f"CAST(NULL AS {_duckdb_type(f.type)}) AS {f.name}"
                        for f in contract(name).arrow(tuple(BET_KINDS)))
    return f"(SELECT {columns} LIMIT 0)"


def _duckdb_type(arrow_type: pa.DataType) -> str:
    if pa.types.is_decimal(arrow_type):
        return f"DECIMAL({arrow_type.precision}, {arrow_type.scale})"
    return {pa.string(): "VARCHAR", pa.int8(): "TINYINT", pa.int16(): "SMALLINT", pa.int32(): "INTEGER",
            pa.int64(): "BIGINT", pa.uint64(): "UBIGINT", pa.bool_(): "BOOLEAN", pa.float64(): "DOUBLE"}[arrow_type]
