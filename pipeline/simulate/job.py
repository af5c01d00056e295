"""The simulation job: Spark schedules ranges of shoes as tasks; each task deals its
range with the kernel and writes its own Parquet files with pyarrow (temporary name,
then rename, so a retried or speculative duplicate writes the same bytes to the same
name); the driver commits the run by writing the manifest last.

Rows never pass through Spark's DataFrame writer: Spark is the scheduler only.
"""

import builtins
import contextlib
import os
import re
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from math import ceil
from pathlib import Path

import pyarrow.parquet as pq

from pipeline import __version__
from pipeline.errors import BaccaratError
from pipeline.runs import (
    TEMPORARY_PREFIX,
    HashingFile,
    commit,
    data_dir,
    read_manifest,
    remove_data,
    remove_temporaries,
    uncommit,
)
from pipeline.simulate.batch import Dealer
from pipeline.tables import RuleSet

SHOES_PER_BATCH = 4096  # the kernel's working set stays in cache-friendly, bounded memory
SHOES_PER_TASK = 100_000  # few enough tasks that Spark's per-task cost stays small
MAX_SEED = 2**64 - 1
WRITE_OPTIONS = {"compression": "zstd", "store_schema": False, "store_decimal_as_integer": True}


@dataclass(frozen=True)
class Plan:
    run_id: str
    rule_set: RuleSet
    seed: int
    shoes: int
    out: Path
    partitions: int | None = None  # None: chosen from the cluster's parallelism once Spark is up

    def ranges(self) -> list[tuple[int, int]]:
        """Contiguous shoe ranges [first, last), one per task and file."""
        size = ceil(self.shoes / min(self.partitions, self.shoes))
        return [(first, min(first + size, self.shoes)) for first in range(0, self.shoes, size)]

    def parameters(self) -> dict:
        """What determines the content; two runs with equal parameters hold equal rows."""
        return {"rules": self.rule_set.model_dump(mode="json"), "seed": self.seed, "shoes": self.shoes}


def default_partitions(shoes: int, parallelism: int) -> int:
    return max(1, min(shoes, max(parallelism, ceil(shoes / SHOES_PER_TASK))))


def part_name(first: int, last: int) -> str:
    return f"part-{first:012d}-{last - 1:012d}.parquet"


class SimulationFailed(BaccaratError):
    """A run could not be written (a task's or the commit's OSError, such as a full disk): nothing
    was committed. The message is one line."""


def _task_attempt() -> int:
    """The Spark task's attempt number (0 for the first), or 0 outside a Spark task."""
    from pyspark import TaskContext

    context = TaskContext.get()
    return context.attemptNumber() if context is not None else 0


def write_range(plan: Plan, first: int, last: int) -> dict:
    """Deal shoes [first, last) and write their rounds and shoes files; runs inside a Spark task."""
    dealer = Dealer.of(plan.rule_set)
    name = part_name(first, last)
    targets = {table: data_dir(plan.out, table, plan.run_id) / name for table in ("rounds", "shoes")}
    temporaries = {t: p.with_name(f"{TEMPORARY_PREFIX}{p.name}.{uuid.uuid4().hex}.tmp") for t, p in targets.items()}
    outcomes = {"B": 0, "P": 0, "T": 0}
    rows = {"rounds": 0, "shoes": 0}
    writers, sinks = {}, {}
    try:
        for start in range(first, last, SHOES_PER_BATCH):
            tables = dict(zip(("rounds", "shoes"), dealer.deal(plan.seed, start, min(SHOES_PER_BATCH, last - start))))
            for table, data in tables.items():
                if table not in writers:
                    targets[table].parent.mkdir(parents=True, exist_ok=True)
                    sinks[table] = HashingFile(temporaries[table])
                    writers[table] = pq.ParquetWriter(sinks[table], data.schema, **WRITE_OPTIONS)
                writers[table].write_table(data)
                rows[table] += data.num_rows
            # TEST-ONLY fault injection (tests/test_faults.py), off unless the variable is set: the first
            # attempt of every task fails here, mid-write, so that the test sees Spark retry each task.
            if os.environ.get("BACCARAT_TEST_FAIL_FIRST_ATTEMPT") == "1" and _task_attempt() == 0:
                raise RuntimeError(f"injected fault: first attempt of the task for shoes {first}-{last - 1}")
            counts = tables["rounds"].column("outcome").combine_chunks().value_counts()
            for entry in counts.to_pylist():
                outcomes[entry["values"]] += entry["counts"]
        for table, writer in writers.items():
            writer.close()
            sinks[table].close()
        for table, target in targets.items():
            os.replace(temporaries[table], target)
    finally:
        # After a failure (a full disk fails the close too), release the files without masking the
        # error, and always remove the temporaries.
        for table, writer in writers.items():
            for close in (writer.close, sinks[table].close):
                with contextlib.suppress(Exception):
                    close()
        for temporary in temporaries.values():
            temporary.unlink(missing_ok=True)
    return {
        "first_shoe": first,
        "last_shoe": last - 1,
        "outcomes": outcomes,
        "files": [
            {"table": table, "path": str(target.relative_to(plan.out)), "rows": rows[table],
             "sha256": sinks[table].digest.hexdigest()}
            for table, target in targets.items()
        ],
    }


def prepare(plan: Plan, overwrite: bool) -> dict | None:
    """Check the run id against what is on disk; returns the existing manifest when this is a no-op."""
    existing = read_manifest(plan.out, plan.run_id)
    if existing is not None:
        if existing.get("parameters") == plan.parameters():
            return existing
        if not overwrite:
            raise BaccaratError(
                f"run {plan.run_id!r} already exists in {plan.out} with different parameters "
                "(use --overwrite to replace it, or another --run-id)"
            )
        uncommit(plan.out, plan.run_id)
    remove_data(plan.out, plan.run_id)  # leftovers of an uncommitted attempt are never visible
    return None


def run(spark, plan: Plan, on_progress: Callable[[int, int], None] | None = None) -> dict:
    """Deal and write every range as a Spark task, then commit; returns the manifest.

    on_progress(shoes_done, rounds_done) is called on the driver about twice a second.
    """
    started = datetime.now(timezone.utc)
    ranges = plan.ranges()
    context = spark.sparkContext
    shoes_done, rounds_done = context.accumulator(0), context.accumulator(0)

    def task(shoe_range):
        result = write_range(plan, *shoe_range)
        shoes_done.add(shoe_range[1] - shoe_range[0])
        rounds_done.add(sum(result["outcomes"].values()))
        return result

    tasks = context.parallelize(ranges, len(ranges)).map(task)
    try:
        results = _collect_reporting(tasks, lambda: on_progress and on_progress(shoes_done.value, rounds_done.value))
    except Exception as error:
        message = _os_error_message(str(error))
        if message is None:
            raise  # not an I/O failure: a bug, shown with its traceback
        raise SimulationFailed(f"run {plan.run_id!r} was not committed: a task failed writing under "
                               f"{plan.out}: {message}") from None
    remove_temporaries(plan.out, plan.run_id)  # every task succeeded: what is left is from dead attempts
    results.sort(key=lambda r: r["first_shoe"])
    outcomes = {key: sum(r["outcomes"][key] for r in results) for key in ("B", "P", "T")}
    manifest = {
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
        "ended_at": datetime.now(timezone.utc).isoformat(),
        "files": [entry | {"first_shoe": r["first_shoe"], "last_shoe": r["last_shoe"]}
                  for r in results for entry in r["files"]],
    }
    try:
        commit(plan.out, manifest)
    except OSError as error:
        raise SimulationFailed(f"run {plan.run_id!r} was not committed: writing its manifest failed: {error}") from None
    return manifest


_EXCEPTION_LINE = re.compile(r"^(?:builtins\.)?([A-Za-z]+Error): (.+)$", re.MULTILINE)


def _os_error_message(text: str) -> str | None:
    """What a failed Spark job's task raised, when that was an OSError (or a subclass): the last
    exception line of the task's traceback, which Spark wraps (PythonException, Py4JJavaError)."""
    lines = _EXCEPTION_LINE.findall(text)
    if not lines:
        return None
    name, message = lines[-1]
    kind = getattr(builtins, name, None)
    return message.strip() if isinstance(kind, type) and issubclass(kind, OSError) else None


def _collect_reporting(tasks, report: Callable[[], None]) -> list[dict]:
    """collect() in a thread, so that the driver's main thread can report progress meanwhile."""
    outcome: dict = {}

    def collect():
        try:
            outcome["results"] = tasks.collect()
        except BaseException as error:  # re-raised on the driver's main thread below
            outcome["error"] = error

    worker = threading.Thread(target=collect, daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(0.5)
        report()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["results"]
