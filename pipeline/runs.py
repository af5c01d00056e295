"""Runs: run ids, the `runs` table (a run exists for readers once its row is committed, after its
rounds and shoes), and verification of a run's files against their recorded checksums."""

import json
import re
import shlex
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import ValidationError

from pipeline.config_files import shipped_or_file
from pipeline.errors import BaccaratError
from pipeline.round_groups import RoundGroups, parsed_round_groups, round_groups_json, round_groups_problem
from pipeline.rule_sets import RuleSet, load_rule_set
from pipeline.schemas import contract
from pipeline.storage import StorageError, Store, data_file
from pipeline.tasks import content_key, part_key

RUNS = "runs"
DATA_TABLES = ("rounds", "shoes")
BANQUE_ROUNDS = "banque_rounds"
RUN_TABLES = (*DATA_TABLES, BANQUE_ROUNDS)  # the tables a run's rows may be in, each with its version in `runs`
BANQUE_PARAMETERS = ("decks", "rounds_per_stream", "banker_policy", "player_strategies")
STRATEGIES, BANQUE_POLICIES = "strategies", "banque"  # the folders of conf/ a run's strategies and policy ship in
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")


def check_run_id(run_id: str) -> str:
    if not _RUN_ID.match(run_id) or ".." in run_id:
        shown = run_id if len(run_id) <= 40 else run_id[:40] + "..."
        raise BaccaratError(
            f"run id {shown!r} is not allowed: use 1 to 128 letters, digits, '_', '-' or '.', "
            "starting with a letter or digit, without '..'"
        )
    return run_id


FILE_ENTRY = ("table", "path", "rows", "size", "sha256", "first_shoe", "last_shoe")


@dataclass(frozen=True)
class FileEntry:
    """A data file of a run, as its runs row lists it."""

    table: str
    path: str  # under the output location
    rows: int
    size: int  # bytes
    sha256: str
    first_shoe: int
    last_shoe: int  # inclusive

    def holds_any(self, first: int, last: int) -> bool:
        """Whether the file holds any of shoes [first, last)."""
        return self.first_shoe < last and self.last_shoe >= first


@dataclass(frozen=True)
class RunRecord:
    """A committed run: its row in `runs` (schemas/runs.yaml), typed. from_row and row convert."""

    run_id: str
    rules: str  # the rule set's name
    rule_set: dict  # the resolved rule set, as RuleSet.model_dump(mode="json") gives it
    seed: int
    shoes: int
    rounds: int
    banker_wins: int
    player_wins: int
    ties: int
    partitions: int
    software_version: str
    spark_master: str
    started_at: datetime
    ended_at: datetime
    versions: dict[str, int]  # each table of RUN_TABLES holding the run's rows, and the version of its commit
    files: tuple[FileEntry, ...]
    strategies: dict | None = None  # a game with options: the strategy pair played, as documents
    banque: dict | None = None  # baccarat banque: the BANQUE_PARAMETERS
    round_groups: RoundGroups | None = None  # a one-hand run's rounds by outcome, streak and nets (round_groups.py)

    @property
    def decks(self) -> int:
        return self.rule_set["decks"]

    @property
    def bets(self) -> tuple[str, ...]:
        return tuple(self.rule_set["bets"])

    @property
    def outcomes(self) -> dict[str, int]:
        return {"B": self.banker_wins, "P": self.player_wins, "T": self.ties}

    @property
    def is_banque(self) -> bool:
        return BANQUE_ROUNDS in self.versions

    @property
    def parameters(self) -> dict:
        """What decided the run's rows (its job's parameters, the content key's input)."""
        parameters = {"rules": self.rule_set, "seed": self.seed, "shoes": self.shoes}
        if self.strategies is not None:
            parameters["strategies"] = self.strategies
        return parameters | (self.banque or {})

    def files_of(self, table: str) -> tuple[FileEntry, ...]:
        return tuple(f for f in self.files if f.table == table)

    def files_over(self, table: str, first: int, last: int) -> tuple[FileEntry, ...]:
        """The files of `table` holding any of shoes [first, last)."""
        return tuple(f for f in self.files_of(table) if f.holds_any(first, last))

    def only(self, table: str) -> "RunRecord":
        """The record with the files of `table` alone."""
        return replace(self, files=self.files_of(table))

    def transaction(self) -> tuple[str, int]:
        """The Delta application transaction of a run's commits: its id, and its attempt's start in ms
        (a later attempt of the same run id records a larger version)."""
        return f"baccarat:{self.run_id}", int(self.started_at.timestamp() * 1000)

    def summary(self) -> dict:
        """The record as `baccarat runs --json` prints it: everything but its files and parameters."""
        return {"run_id": self.run_id, "rules": self.rules, "seed": self.seed, "shoes": self.shoes,
                "rounds": self.rounds, "decks": self.decks, "bets": list(self.bets), "outcomes": self.outcomes,
                "partitions": self.partitions, "software_version": self.software_version,
                "spark_master": self.spark_master, "started_at": self.started_at.isoformat(),
                "ended_at": self.ended_at.isoformat(), "versions": self.versions}

    def row(self) -> dict:
        """The record as its row in `runs`."""
        return {
            "run_id": self.run_id, "rules": self.rules, "rule_set": json.dumps(self.rule_set),
            "seed": Decimal(self.seed), "shoes": self.shoes, "rounds": self.rounds, "banker_wins": self.banker_wins,
            "player_wins": self.player_wins, "ties": self.ties, "partitions": self.partitions,
            "software_version": self.software_version, "spark_master": self.spark_master,
            "started_at": self.started_at, "ended_at": self.ended_at,
            **{f"{table}_version": self.versions.get(table) for table in RUN_TABLES},
            "files": json.dumps([asdict(f) for f in self.files]),
            "strategies": None if self.strategies is None else json.dumps(self.strategies),
            "banque": None if self.banque is None else json.dumps(self.banque),
            "round_groups": round_groups_json(self.round_groups),
        }

    @classmethod
    def from_row(cls, row: dict) -> "RunRecord":
        """A runs row as the run's record, or a one-line error naming what is malformed: damaged data, a
        failure of the world."""
        try:
            rule_set = _document(row["rule_set"], "rule_set", ("decks", "bets"))
            return cls(
                run_id=row["run_id"], rules=row["rules"], rule_set=rule_set, seed=int(row["seed"]),
                shoes=row["shoes"], rounds=row["rounds"], banker_wins=row["banker_wins"],
                player_wins=row["player_wins"], ties=row["ties"], partitions=row["partitions"],
                software_version=row["software_version"], spark_master=row["spark_master"],
                started_at=_moment(row["started_at"]), ended_at=_moment(row["ended_at"]),
                versions={table: row[f"{table}_version"] for table in RUN_TABLES
                          if row.get(f"{table}_version") is not None},
                files=_files(row["files"]),
                strategies=None if row.get("strategies") is None else _document(row["strategies"], "strategies"),
                banque=None if row.get("banque") is None else _document(row["banque"], "banque", BANQUE_PARAMETERS),
                round_groups=parsed_round_groups(row.get("round_groups"), len(rule_set["bets"])))
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise DamagedRun(f"the runs row of {row.get('run_id')!r} is malformed ({type(error).__name__}: "
                             f"{error})".splitlines()[0]) from None


def _document(text: str, column: str, keys: tuple[str, ...] = ()) -> dict:
    """A JSON column of a runs row: an object holding `keys`."""
    document = json.loads(text)
    if not isinstance(document, dict) or not set(keys) <= document.keys():
        raise ValueError(f"{column} is not a JSON object" + (f" with {', '.join(keys)}" if keys else ""))
    return document


def _moment(value: datetime) -> datetime:
    if not isinstance(value, datetime):
        raise TypeError(f"{value!r} is not a timestamp")
    return value


def _files(text: str) -> tuple[FileEntry, ...]:
    """The data files a runs row lists, each with every key of FILE_ENTRY."""
    files = json.loads(text)
    if not isinstance(files, list) or not all(isinstance(f, dict) and set(FILE_ENTRY) <= f.keys() for f in files):
        raise ValueError(f"files is not a list of file entries ({', '.join(FILE_ENTRY)})")
    return tuple(FileEntry(**{key: f[key] for key in FILE_ENTRY}) for f in files)


def commit_run(store: Store, run: RunRecord) -> None:
    """Commit the run's row, last: from here on the run exists for the pipeline's readers."""
    schema = contract(RUNS).arrow()
    name = f"run-{run.transaction()[1]}.parquet"
    store.write_and_commit(RUNS, run.run_id, name, pa.Table.from_pylist([run.row()], schema=schema),
                           contract(RUNS).table_schema(()), run.transaction())


def read_runs(store: Store) -> list[RunRecord]:
    """Every committed run's record, by run id."""
    rows = store.read_rows(RUNS)
    return sorted((RunRecord.from_row(row) for row in rows.to_pylist()), key=lambda r: r.run_id) if rows else []


def read_run(store: Store, run_id: str) -> RunRecord | None:
    rows = store.read_rows(RUNS, [run_id])
    return RunRecord.from_row(rows.to_pylist()[0]) if rows is not None and rows.num_rows else None


def written_run(store: Store, run_id: str, path: str) -> RunRecord | None:
    """The record in the runs row file at `path` (committed or not), or None when it holds no readable row."""
    try:
        rows = store.read_file_rows(path).to_pylist()
        return RunRecord.from_row(rows[0] | {"run_id": run_id}) if len(rows) == 1 else None
    except (BaccaratError, StorageError):
        return None


def banque_refusal(store: Store, run_id: str) -> BaccaratError:
    """The one line of a reader of one-hand rounds given a baccarat banque run."""
    return BaccaratError(f"run {run_id!r} is a baccarat banque run, in {store.location(BANQUE_ROUNDS)}: the marts, "
                         "the report, the composition and the backtest read one-hand rounds")


def read_committed_run(store: Store, run_id: str) -> tuple[RunRecord, RuleSet]:
    """A committed run's record and its rule set, or a one-line error: an unknown run, a malformed rule set."""
    record = read_run(store, run_id)
    if record is None:
        raise BaccaratError(f"unknown run id {run_id!r}: no row in {store.location(RUNS)}")
    if record.is_banque:
        raise banque_refusal(store, run_id)
    try:
        return record, RuleSet.model_validate(record.rule_set)
    except ValidationError as error:
        raise BaccaratError(f"the rule set of run {run_id!r} is malformed ({error})".splitlines()[0]) from None


def shoe_rows(store: Store, run: RunRecord, table: str, columns: list[str], first: int, last: int) -> pa.Table:
    """The rows of shoes [first, last) of one of the run's tables, from the committed files that hold them."""
    return pa.concat_tables([pq.read_table(store.fs_path(f.path), filesystem=store.filesystem, columns=columns,
                                           filters=[("shoe_id", ">=", first), ("shoe_id", "<", last)])
                             for f in run.files_over(table, first, last)])


def committed_runs(store: Store, table: str = "rounds") -> list[str]:
    """Run ids with a row in `runs` whose rows are in `table` (rounds: one-hand runs), sorted."""
    rows = store.read_rows(RUNS, columns=["run_id", f"{table}_version"])
    return sorted(row["run_id"] for row in rows.to_pylist() if row[f"{table}_version"] is not None) if rows else []


class DamagedRun(StorageError):
    """A committed run whose files, or the logs of its tables, fail their checks: one line naming the
    first problem and the command that repairs it (docs/repair.md)."""


def rules_argument(run: RunRecord) -> str:
    """--rules that deals the run's rule set again: the shipped set's name when it is the one the run was
    dealt with, else the YAML file it came from, named after the set (its runs row holds the set as dealt):
    the shipped set of the same name would deal another run under the same id."""
    try:
        shipped = load_rule_set(run.rules).model_dump(mode="json")
    except BaccaratError:
        shipped = None
    dealt = run.rule_set
    if shipped is not None and run.is_banque:  # --decks of the command overrides the set's
        shipped, dealt = {**shipped, "decks": None}, {**dealt, "decks": None}
    return run.rules if shipped == dealt else f"{run.rules}.yaml"


def repair_command(store: Store, run: RunRecord) -> str:
    """The command that deals a run again in place, byte for byte (the same partitions), as a shell line;
    none when the row's parameters are not those its files were dealt with (an edited seed would deal
    another run under its id, which would then verify)."""
    if {part_key(entry.path) for entry in run.files} - {None, content_key(run.parameters)}:
        return (f"none from its runs row, whose parameters are not those its files were dealt with: deal run "
                f"{run.run_id!r} again with the ones it was made with, and --overwrite")
    words = ["baccarat", "simulate", "--rules", rules_argument(run), "--seed", str(run.seed), "--shoes", str(run.shoes),
             "--partitions", str(run.partitions), "--run-id", run.run_id, "--out", store.uri]
    if strategies := run.strategies:
        words += ["--player-strategy", shipped_or_file(STRATEGIES, strategies["player"]),
                  "--banker-strategy", shipped_or_file(STRATEGIES, strategies["banker"])]
    if run.is_banque:
        banque = run.banque
        words += ["--decks", str(banque["decks"] or "infinite"),
                  "--banker-policy", shipped_or_file(BANQUE_POLICIES, banque["banker_policy"]),
                  "--player-strategy", ",".join(shipped_or_file(STRATEGIES, strategy)
                                                for strategy in banque["player_strategies"])]
    return shlex.join([*words, "--overwrite"])


def contract_problem(where: str, footer: pq.FileMetaData | str, table: str, bets: tuple[str, ...],
                     decisions: bool = False, rows: int | None = None,
                     footer_problem: Callable[[pq.FileMetaData], str | None] | None = None) -> str | None:
    """What breaks the contract of `table` (schemas/) in the data file at `where` by its Parquet footer
    (Store.parquet_footers: why it is not readable, when a string), or a row count other than `rows`
    (the count recorded for it, when known), or what footer_problem(footer) finds, or None."""
    if isinstance(footer, str):
        return f"{where} is not a readable Parquet file: {footer}"
    if rows is not None and footer.num_rows != rows:
        return f"data file holds {footer.num_rows:,} rows by its Parquet footer, {rows:,} recorded: {where}"
    found = footer.schema.to_arrow_schema()
    for field in contract(table).arrow(bets, decisions=decisions):
        if field.name not in found.names:
            return f"{where}: column {field.name!r} is missing"
        if not found.field(field.name).type.equals(field.type):
            return f"{where}: column {field.name!r} is {found.field(field.name).type}, expected {field.type}"
    return f"{where}: {problem}" if footer_problem and (problem := footer_problem(footer)) else None


def uncommitted(store: Store, run: RunRecord, table: str) -> str | None:
    """Why the table does not hold the files the run's row lists (now, or at the version it records)."""
    listed, recorded = sorted(f.path for f in run.files_of(table)), run.versions[table]
    try:
        if listed == [f["path"] for f in store.partition_files(table, run.run_id)]:
            return None
        delta = store.delta_table(table)
        latest = delta.version() if delta is not None else -1
        if recorded <= latest and listed == [f["path"] for f in store.partition_files(table, run.run_id, recorded)]:
            return None  # an overwrite that failed after this table's commit: the run's own version holds them
    except StorageError as error:
        return error.problem
    lost = (f" (its log ends at version {latest}, before the run's commit, version {recorded})" if latest >= 0
            else " (the table has no log)")
    return f"the {table} table does not hold the files its runs row lists" + (lost if recorded > latest else "")


def miscounted(run: RunRecord) -> str | None:
    """Why the counts of a runs row disagree with the rows of the files it lists (a row edited by hand),
    or None. A banque run counts the outcomes of both hands, so only a one-hand run's must add up."""
    table = BANQUE_ROUNDS if run.is_banque else "rounds"
    counts = {name: sum(f.rows for f in run.files_of(name)) for name in (table, "shoes")}
    if counts[table] != run.rounds:
        return f"its runs row records {run.rounds:,} rounds, the {table} files it lists hold {counts[table]:,}"
    if run.files_of("shoes") and counts["shoes"] != run.shoes:
        return f"its runs row records {run.shoes:,} shoes, the shoes files it lists hold {counts['shoes']:,}"
    if not run.is_banque and sum(run.outcomes.values()) != run.rounds:
        return (f"its runs row records {run.rounds:,} rounds but {sum(run.outcomes.values()):,} Banker wins, "
                "Player wins and ties")
    return round_groups_problem(run.round_groups, run.outcomes)


def in_its_folder(entry: FileEntry, run_id: str) -> bool:
    """Whether a file a runs row lists is a Parquet file in the run's folder of its table, where the jobs
    write them: a row edited to list another path must not send the readers outside OUT."""
    name = str(entry.path).rpartition("/")[2]
    return entry.table in RUN_TABLES and entry.path == data_file(entry.table, run_id, name) and name.endswith(".parquet")


def run_problems(store: Store, run: RunRecord, checksums: bool | set[str] = True, committed: bool = True,
                 read_files: bool = True) -> list[str]:
    """What is wrong with a committed run's tables (rounds and shoes, or banque_rounds), a line each: counts
    of its row that the files it lists do not add up to and tables that do not hold those files (unless
    `committed` is False: a row file not yet committed, or the record of one table's files), files outside
    the run's folders, and with `read_files` (else their readers check them) files missing or of another
    size, failing their SHA-256 (every file, or the paths in `checksums`) or their contract, or holding
    another number of rows than the row records."""
    problems = [why for why in (miscounted(run),) if committed and why]
    problems += [why for table in run.versions if committed and (why := uncommitted(store, run, table))]
    placed = [f for f in run.files if in_its_folder(f, run.run_id)]  # the others are never opened
    problems += [f"its runs row lists {f.path!r}, not a Parquet file in the run's folder of the {f.table} table"
                 for f in run.files if f not in placed]
    sound = []
    for entry, size in zip(placed, store.file_sizes([f.path for f in placed]) if read_files else ()):
        where = store.location(entry.path)
        if size is None:
            problems.append(f"data file missing or not a regular file: {where}")
        elif size != entry.size:
            problems.append(f"data file is {size:,} bytes, its runs row records {entry.size:,}: {where}")
        else:
            sound.append(entry)
    digests = store.sha256s([f.path for f in sound if checksums is True or (checksums and f.path in checksums)])
    for entry, footer in zip(sound, store.parquet_footers([f.path for f in sound])):
        if entry.path in digests and digests[entry.path] != entry.sha256:
            problems.append(f"data file fails its checksum: {store.location(entry.path)}")
        elif why := contract_problem(store.location(entry.path), footer, entry.table, run.bets,
                                     run.strategies is not None, entry.rows):
            problems.append(why)
    return [f"run {run.run_id!r}: {problem}" for problem in problems]


def check_run(store: Store, run: RunRecord, checksums: bool | set[str] = True, read_files: bool = True) -> None:
    """A committed run whose files pass run_problems' checks, or DamagedRun naming the first problem and
    the repair command."""
    if problems := run_problems(store, run, checksums, read_files=read_files):
        raise DamagedRun(f"{problems[0]}; repair: {repair_command(store, run)}")


def failing_checksums(store: Store, files: list[dict]) -> list[dict]:
    """The committed files (entries with `path` and the `sha256` their commit recorded: Store.committed_files)
    whose bytes fail it, or that are missing; a file committed without a checksum is not hashed."""
    recorded = [f for f in files if f.get("sha256")]
    digests = store.sha256s([f["path"] for f in recorded])
    return [f for f in recorded if digests[f["path"]] != f["sha256"]]


def missized_files(store: Store, files: list[dict]) -> list[tuple[dict, int | None]]:
    """The committed files (entries with `path` and `size`) missing or of another size than their log
    records, each with its size (None when missing)."""
    sizes = store.file_sizes([f["path"] for f in files])
    return [(f, size) for f, size in zip(files, sizes) if size != f["size"]]
