"""The simulation job: Spark schedules ranges of shoes as tasks; each task deals its
range with the kernel and writes its own Parquet files with pyarrow, through the store's
filesystem (a retried or speculative duplicate writes the same bytes to the same name);
the driver commits every file of a table in one Delta transaction, rounds and shoes, then
the run's row in `runs`, last.

Rows never pass through Spark's DataFrame writer: Spark is the scheduler only.
"""

import contextlib
import hashlib
import json
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

import pyarrow.parquet as pq

from pipeline import __version__
from pipeline.bets import BET_KINDS
from pipeline.errors import BaccaratError
from pipeline.games.pairs import StrategyPair, checked_pair
from pipeline.repair import existing_run
from pipeline.rule_sets import RuleSet
from pipeline.runs import DATA_TABLES, commit_run, transaction
from pipeline.schemas import contract
from pipeline.simulate.batch import Dealer
from pipeline.storage import StorageError, Store
from pipeline.tasks import part_name, partitions_for, run_ranges, shoe_ranges

SHOES_PER_BATCH = 4096  # the kernel's working set stays in cache-friendly, bounded memory
SHOES_PER_TASK = 100_000  # few enough tasks that Spark's per-task cost stays small
MAX_SEED = 2**64 - 1
# 10 billion shoes is about 800 billion rounds, some 7 TB of Parquet; a plan of more is refused, so the
# driver's memory stays bounded (it holds one range a task).
MAX_SHOES = 10**10
MAX_PARTITIONS = 1_000_000
WRITE_OPTIONS = {"compression": "zstd", "store_schema": False, "store_decimal_as_integer": True}


@dataclass(frozen=True)
class Plan:
    run_id: str
    rule_set: RuleSet
    seed: int
    shoes: int
    out: Store
    partitions: int | None = None  # None: chosen from the cluster's parallelism once Spark is up
    job: str = field(default_factory=lambda: uuid.uuid4().hex[:12])  # tags this job's temporary files
    strategies: StrategyPair | None = None  # the pair played in a game with options, else None

    def __post_init__(self):
        checked_pair(self.rule_set, self.strategies)

    def ranges(self) -> list[tuple[int, int]]:
        """Contiguous shoe ranges [first, last), one per task and file."""
        return shoe_ranges(self.shoes, self.partitions)

    def parameters(self) -> dict:
        """What determines the content; two runs with equal parameters hold equal rows."""
        parameters = {"rules": self.rule_set.model_dump(mode="json"), "seed": self.seed, "shoes": self.shoes}
        if self.strategies is not None:
            parameters["strategies"] = self.strategies.document()
        return parameters

    def content_key(self) -> str:
        """Part of every file name: runs with other parameters never write over each other's files
        (an overwrite that fails leaves the old run's files whole)."""
        return hashlib.sha256(json.dumps(self.parameters(), sort_keys=True).encode()).hexdigest()[:12]


def default_partitions(shoes: int, parallelism: int) -> int:
    return partitions_for(shoes, parallelism, SHOES_PER_TASK)


class SimulationFailed(BaccaratError):
    """A run could not be written (a task's or the commit's OSError, such as a full disk): nothing
    was committed. The message is one line."""


def _task_attempt() -> int:
    """The Spark task's attempt number (0 for the first), or 0 outside a Spark task."""
    from pyspark import TaskContext

    context = TaskContext.get()
    return context.attemptNumber() if context is not None else 0


def write_range(plan: Plan, first: int, last: int, report_batch: Callable[[int, int], None] | None = None) -> dict:
    """Deal shoes [first, last) and write their rounds and shoes files; runs inside a Spark task.
    report_batch(shoes, rounds), if given, hears the range's counts so far after each batch written."""
    dealer = Dealer.of(plan.rule_set, plan.strategies)
    name = part_name(first, last, plan.content_key())
    outcomes = {"B": 0, "P": 0, "T": 0}
    rows = {"rounds": 0, "shoes": 0}
    writers = {}
    with contextlib.ExitStack() as files:
        streams = {table: files.enter_context(plan.out.create_file(table, plan.run_id, name, plan.job))
                   for table in DATA_TABLES}
        try:
            for start in range(first, last, SHOES_PER_BATCH):
                tables = dict(zip(DATA_TABLES, dealer.deal(plan.seed, start, min(SHOES_PER_BATCH, last - start))))
                for table, data in tables.items():
                    if table not in writers:
                        writers[table] = pq.ParquetWriter(streams[table], data.schema, **WRITE_OPTIONS)
                    writers[table].write_table(data)
                    rows[table] += data.num_rows
                # TEST-ONLY fault injection (tests/test_faults.py), off unless the variable is set: the first
                # attempt of every task fails here, mid-write, so that the test sees Spark retry each task.
                if os.environ.get("BACCARAT_TEST_FAIL_FIRST_ATTEMPT") == "1" and _task_attempt() == 0:
                    raise RuntimeError(f"injected fault: first attempt of the task for shoes {first}-{last - 1}")
                counts = tables["rounds"].column("outcome").combine_chunks().value_counts()
                for entry in counts.to_pylist():
                    outcomes[entry["values"]] += entry["counts"]
                if report_batch is not None:
                    report_batch(min(start + SHOES_PER_BATCH, last) - first, rows["rounds"])
        finally:
            # After a failure (a full disk fails the close too), release the files without masking the error.
            for writer in writers.values():
                with contextlib.suppress(Exception):
                    writer.close()
    return {
        "first_shoe": first,
        "last_shoe": last - 1,
        "outcomes": outcomes,
        "files": [
            {"table": table, "path": f"{table}/run_id={plan.run_id}/{name}", "rows": rows[table],
             "size": streams[table].size, "sha256": streams[table].digest.hexdigest()}
            for table in DATA_TABLES
        ],
    }


def prepare(plan: Plan, overwrite: bool) -> dict | None:
    """Check the run id against the committed runs; returns the existing run when this is a no-op.
    An overwrite replaces the old run only when the new one commits, table by table; an overwrite of
    a damaged run deals it again (pipeline.repair)."""
    existing = existing_run(plan.out, plan.run_id, plan.parameters(), overwrite)
    if existing is None or existing["parameters"] == plan.parameters():
        return existing
    if not overwrite:
        raise BaccaratError(
            f"run {plan.run_id!r} already exists in {plan.out} with different parameters "
            "(use --overwrite to replace it, or another --run-id)"
        )
    return None


def run(spark, plan: Plan, on_progress: Callable[[int, int], None] | None = None) -> dict:
    """Deal and write every range as a Spark task, then commit; returns the run's record.

    on_progress(shoes_done, rounds_done) is called on the driver about ten times a second; the counts
    come from the tasks after each batch (see progress), and from whole tasks where no datagram gets through.
    """
    started = datetime.now(UTC)
    ranges = plan.ranges()
    context = spark.sparkContext
    results = run_ranges(
        context, ranges, lambda first, last, report_batch: write_range(plan, first, last, report_batch),
        lambda result: sum(result["outcomes"].values()), on_progress,
        lambda message: SimulationFailed(f"run {plan.run_id!r} was not committed: a task failed writing under "
                                         f"{plan.out}: {message}"))
    for table in DATA_TABLES:  # every task succeeded: temporaries left are from dead attempts
        plan.out.remove_temporaries(table, plan.run_id, plan.job)
    results.sort(key=lambda r: r["first_shoe"])
    outcomes = {key: sum(r["outcomes"][key] for r in results) for key in ("B", "P", "T")}
    record = {
        "run_id": plan.run_id,
        "parameters": plan.parameters(),
        "rules": plan.rule_set.name,
        "seed": plan.seed,
        "shoes": plan.shoes,
        "rounds": sum(outcomes.values()),
        "decks": plan.rule_set.decks,
        "bets": list(plan.rule_set.bets),
        "outcomes": outcomes,
        "partitions": len(ranges),
        "software_version": __version__,
        "spark_master": context.master,
        "started_at": started.isoformat(),
        "files": [entry | {"first_shoe": r["first_shoe"], "last_shoe": r["last_shoe"]}
                  for r in results for entry in r["files"]],
    }
    try:
        record["versions"] = {
            table: plan.out.commit_partition(table, plan.run_id, [f for f in record["files"] if f["table"] == table],
                                             contract(table).table_schema(tuple(BET_KINDS)), transaction(record))
            for table in DATA_TABLES
        }
        record["ended_at"] = datetime.now(UTC).isoformat()
        commit_run(plan.out, record)
    except StorageError as error:
        raise SimulationFailed(f"run {plan.run_id!r} was not committed: {error}") from None
    return record
