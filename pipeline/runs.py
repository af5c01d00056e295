"""Runs: run ids, the `runs` table (a run exists for readers once its row is committed, after its
rounds and shoes), and verification of a run's files against their recorded checksums."""

import json
import os
import re
import shlex
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import ValidationError

from pipeline.errors import BaccaratError
from pipeline.rule_sets import RuleSet
from pipeline.schemas import contract
from pipeline.storage import StorageError, Store, first_line

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


def written_run(store: Store, run_id: str, path: str) -> dict | None:
    """The record in the runs row file at `path` (committed or not), or None when it holds no readable row."""
    try:
        rows = store.read_file_rows(path).to_pylist()
        return _record(rows[0] | {"run_id": run_id}) if len(rows) == 1 else None
    except (BaccaratError, StorageError):
        return None


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


class DamagedRun(StorageError):
    """A committed run whose files, or the logs of its tables, fail their checks: one line naming the
    first problem and the command that repairs it (docs/repair.md)."""


def repair_command(store: Store, run: dict) -> str:
    """The command that deals a run again in place, byte for byte (the same partitions), as a shell line."""
    words = ["baccarat", "simulate", "--rules", run["rules"], "--seed", str(run["seed"]), "--shoes", str(run["shoes"]),
             "--partitions", str(run["partitions"]), "--run-id", run["run_id"], "--out", store.uri]
    parameters = run["parameters"]
    if strategies := parameters.get("strategies"):
        words += ["--player-strategy", strategies["player"]["name"], "--banker-strategy", strategies["banker"]["name"]]
    if BANQUE_ROUNDS in run["versions"]:
        words += ["--decks", str(parameters["decks"] or "infinite"), "--banker-policy",
                  parameters["banker_policy"]["name"], "--player-strategy",
                  ",".join(strategy["name"] for strategy in parameters["player_strategies"])]
    return shlex.join([*words, "--overwrite"])


def contract_problem(store: Store, path: str, table: str, bets: tuple[str, ...], decisions: bool = False) -> str | None:
    """What breaks the contract of `table` (schemas/) in the data file at `path`, or None."""
    where = store.location(path)
    try:
        found = pq.read_schema(store.fs_path(path), filesystem=store.filesystem)
    except (OSError, pa.ArrowInvalid) as error:
        return f"{where} is not a readable Parquet file: {first_line(error)}"
    for field in contract(table).arrow(bets, decisions=decisions):
        if field.name not in found.names:
            return f"{where}: column {field.name!r} is missing"
        if not found.field(field.name).type.equals(field.type):
            return f"{where}: column {field.name!r} is {found.field(field.name).type}, expected {field.type}"
    return None


def uncommitted(store: Store, run: dict, table: str) -> str | None:
    """Why the table does not hold the files the run's row lists (now, or at the version it records)."""
    listed, recorded = sorted(f["path"] for f in run_files(run, table)), run["versions"][table]
    try:
        if listed == [f["path"] for f in store.partition_files(table, run["run_id"])]:
            return None
        delta = store.delta_table(table)
        latest = delta.version() if delta is not None else -1
        if recorded <= latest and listed == [f["path"] for f in store.partition_files(table, run["run_id"], recorded)]:
            return None  # an overwrite that failed after this table's commit: the run's own version holds them
    except StorageError as error:
        return str(error)
    lost = (f" (its log ends at version {latest}, before the run's commit, version {recorded})" if latest >= 0
            else " (the table has no log)")
    return f"the {table} table does not hold the files its runs row lists" + (lost if recorded > latest else "")


def run_problems(store: Store, run: dict, checksums: bool | set[str] = True, committed: bool = True) -> list[str]:
    """What is wrong with a committed run's tables (rounds and shoes, or banque_rounds), a line each: tables
    that do not hold the files its row lists (unless `committed` is False), files missing or of another
    size, failing their SHA-256 (every file, or the paths in `checksums`) or their contract."""
    problems = [why for table in run["versions"] if committed and (why := uncommitted(store, run, table))]
    files = run["files"]
    sound = []
    for entry, size in zip(files, store.file_sizes([f["path"] for f in files])):
        where = store.location(entry["path"])
        if size is None:
            problems.append(f"data file missing or not a regular file: {where}")
        elif size != entry["size"]:
            problems.append(f"data file is {size:,} bytes, its runs row records {entry['size']:,}: {where}")
        else:
            sound.append(entry)
    hashed = [f for f in sound if checksums is True or (checksums and f["path"] in checksums)]
    with ThreadPoolExecutor(os.cpu_count()) as pool:  # hashing and reading release the GIL
        digests = dict(zip((f["path"] for f in hashed), pool.map(store.sha256, [f["path"] for f in hashed])))
    for entry in sound:
        if entry["path"] in digests and digests[entry["path"]] != entry["sha256"]:
            problems.append(f"data file fails its checksum: {store.location(entry['path'])}")
        elif why := contract_problem(store, entry["path"], entry["table"], tuple(run["bets"]),
                                     "strategies" in run["parameters"]):
            problems.append(why)
    return [f"run {run['run_id']!r}: {problem}" for problem in problems]


def check_run(store: Store, run: dict, checksums: bool | set[str] = True) -> None:
    """A committed run whose files pass run_problems' checks, or DamagedRun naming the first problem and
    the repair command."""
    if problems := run_problems(store, run, checksums):
        raise DamagedRun(f"{problems[0]}; repair: {repair_command(store, run)}")

