"""Runs: run ids, the `runs` table (a run exists for readers once its row is committed, after its
rounds and shoes), and verification of a run's files against their recorded checksums."""

import json
import os
import re
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from decimal import Decimal

import pyarrow as pa
from pydantic import ValidationError

from pipeline.errors import BaccaratError
from pipeline.schemas import contract
from pipeline.storage import Store
from pipeline.tables import RuleSet

RUNS = "runs"
DATA_TABLES = ("rounds", "shoes")
BANQUE_ROUNDS = "banque_rounds"
RUN_TABLES = (*DATA_TABLES, BANQUE_ROUNDS)  # the tables a run's rows may be in, each with its version in `runs`
BANQUE_PARAMETERS = ("decks", "rounds_per_stream", "banker_policy", "player_strategies")
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")


def check_run_id(run_id: str) -> str:
    if not _RUN_ID.match(run_id) or ".." in run_id:
        shown = run_id if len(run_id) <= 40 else run_id[:40] + "..."
        raise BaccaratError(
            f"run id {shown!r} is not allowed: use 1 to 128 letters, digits, '_', '-' or '.', "
            "starting with a letter or digit, without '..'"
        )
    return run_id


def transaction(run: dict) -> tuple[str, int]:
    """The Delta application transaction of a run's commits: its id, and its attempt's start in ms
    (a later attempt of the same run id records a larger version)."""
    return f"baccarat:{run['run_id']}", int(datetime.fromisoformat(run["started_at"]).timestamp() * 1000)


def commit_run(store: Store, run: dict) -> None:
    """Commit the run's row, last: from here on the run exists for the pipeline's readers."""
    row = {
        "run_id": run["run_id"], "rules": run["rules"], "rule_set": json.dumps(run["parameters"]["rules"]),
        "seed": Decimal(run["seed"]), "shoes": run["shoes"], "rounds": run["rounds"],
        "banker_wins": run["outcomes"]["B"], "player_wins": run["outcomes"]["P"], "ties": run["outcomes"]["T"],
        "partitions": run["partitions"], "software_version": run["software_version"],
        "spark_master": run["spark_master"], "started_at": datetime.fromisoformat(run["started_at"]),
        "ended_at": datetime.fromisoformat(run["ended_at"]),
        **{f"{table}_version": run["versions"].get(table) for table in RUN_TABLES},
        "files": json.dumps(run["files"]),
        "strategies": json.dumps(run["parameters"]["strategies"]) if "strategies" in run["parameters"] else None,
        "banque": json.dumps({key: run["parameters"][key] for key in BANQUE_PARAMETERS})
        if BANQUE_ROUNDS in run["versions"] else None,
    }
    schema = contract(RUNS).arrow()
    name = f"run-{transaction(run)[1]}.parquet"
    store.write_and_commit(RUNS, run["run_id"], name, pa.Table.from_pylist([row], schema=schema),
                           contract(RUNS).table_schema(()), transaction(run))


FILE_ENTRY = ("table", "path", "rows", "size", "sha256", "first_shoe", "last_shoe")


def _files(text: str) -> list[dict]:
    """The data files a runs row lists, each with every key of FILE_ENTRY."""
    files = json.loads(text)
    if not isinstance(files, list) or not all(isinstance(f, dict) and set(FILE_ENTRY) <= f.keys() for f in files):
        raise ValueError(f"files is not a list of file entries ({', '.join(FILE_ENTRY)})")
    return files


def _record(row: dict) -> dict:
    """A runs row as the run's record (the shape the simulation returns)."""
    try:
        rules = json.loads(row["rule_set"])
        parameters = {"rules": rules, "seed": int(row["seed"]), "shoes": row["shoes"]}
        if row.get("strategies") is not None:
            parameters["strategies"] = json.loads(row["strategies"])
        if row.get("banque") is not None:
            parameters |= json.loads(row["banque"])
        return {
            "run_id": row["run_id"],
            "parameters": parameters,
            "rules": row["rules"], "seed": int(row["seed"]), "shoes": row["shoes"], "rounds": row["rounds"],
            "decks": rules["decks"], "bets": list(rules["bets"]),
            "outcomes": {"B": row["banker_wins"], "P": row["player_wins"], "T": row["ties"]},
            "partitions": row["partitions"], "software_version": row["software_version"],
            "spark_master": row["spark_master"], "started_at": row["started_at"].isoformat(),
            "ended_at": row["ended_at"].isoformat(),
            "versions": {table: row[f"{table}_version"] for table in RUN_TABLES
                         if row.get(f"{table}_version") is not None},
            "files": _files(row["files"]),
        }
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise BaccaratError(f"the runs row of {row.get('run_id')!r} is malformed ({type(error).__name__}: "
                            f"{error})".splitlines()[0]) from None


def read_runs(store: Store) -> list[dict]:
    """Every committed run's record, by run id."""
    rows = store.read_rows(RUNS)
    return sorted((_record(row) for row in rows.to_pylist()), key=lambda r: r["run_id"]) if rows else []


def read_run(store: Store, run_id: str) -> dict | None:
    rows = store.read_rows(RUNS, [run_id])
    return _record(rows.to_pylist()[0]) if rows is not None and rows.num_rows else None


def read_committed_run(store: Store, run_id: str) -> tuple[dict, RuleSet]:
    """A committed run's record and its rule set, or a one-line error: an unknown run, a malformed rule set."""
    record = read_run(store, run_id)
    if record is None:
        raise BaccaratError(f"unknown run id {run_id!r}: no row in {store.location(RUNS)}")
    if BANQUE_ROUNDS in record["versions"]:
        raise BaccaratError(f"run {run_id!r} is a baccarat banque run, in {store.location(BANQUE_ROUNDS)}: the marts, "
                            "the report and the composition read one-hand rounds")
    try:
        return record, RuleSet.model_validate(record["parameters"]["rules"])
    except ValidationError as error:
        raise BaccaratError(f"the rule set of run {run_id!r} is malformed ({error})".splitlines()[0]) from None


def committed_runs(store: Store, table: str = "rounds") -> list[str]:
    """Run ids with a row in `runs` whose rows are in `table` (rounds: one-hand runs), sorted; runs
    without a row do not exist."""
    rows = store.read_rows(RUNS, columns=["run_id", f"{table}_version"])
    return sorted(row["run_id"] for row in rows.to_pylist() if row[f"{table}_version"] is not None) if rows else []


def run_files(run: dict, table: str) -> list[dict]:
    return [f for f in run["files"] if f["table"] == table]


def verify_files(store: Store, run: dict) -> None:
    """The run's tables (rounds and shoes, or banque_rounds) hold the files its row lists, committed at
    the versions it records, each a regular file with its checksum; or a one-line error naming what is wrong."""
    for table in run["versions"]:
        listed = sorted(f["path"] for f in run_files(run, table))
        committed = [f["path"] for f in store.partition_files(table, run["run_id"])]
        if listed != committed:  # an overwrite that failed after this table's commit: the run's own version
            committed = [f["path"] for f in store.partition_files(table, run["run_id"], run["versions"][table])]
        if listed != committed:
            raise BaccaratError(f"run {run['run_id']!r}: the {table} table at version {run['versions'][table]} "
                                "does not hold the files its runs row lists")
    for entry in run["files"]:
        if not store.is_regular_file(entry["path"]):
            raise BaccaratError(f"run {run['run_id']!r}: data file missing or not a regular file: "
                                f"{store.location(entry['path'])}")
    with ThreadPoolExecutor(os.cpu_count()) as pool:  # hashing and reading release the GIL
        digests = list(pool.map(store.sha256, [entry["path"] for entry in run["files"]]))
    for entry, digest in zip(run["files"], digests):
        if digest != entry["sha256"]:
            raise BaccaratError(f"run {run['run_id']!r}: data file fails its checksum: {store.location(entry['path'])}")
