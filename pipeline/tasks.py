"""Spark as the scheduler of the jobs that write files: contiguous ranges of shoes as tasks, collected
on a thread while the driver reports progress (from inside the tasks, see progress), and what a failed
task's OSError said, as one line."""

import builtins
import contextlib
import hashlib
import json
import re
import threading
from collections.abc import Callable
from collections.abc import Iterable
from math import ceil

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline import progress
from pipeline.spark import SPARK_LOG_FILE
from pipeline.termination import shut_down_under_us

REPORT_SECONDS = 0.1  # how often the driver reports progress while tasks run
WRITE_BUFFER_BYTES = 1 << 20


def shoe_ranges(shoes: int, partitions: int) -> list[tuple[int, int]]:
    """Contiguous shoe ranges [first, last), one per task and file."""
    size = ceil(shoes / min(partitions, shoes))
    return [(first, min(first + size, shoes)) for first in range(0, shoes, size)]


def partitions_for(shoes: int, parallelism: int, shoes_per_task: int) -> int:
    """Enough tasks to use every core, and more for a big job so that a task stays bounded."""
    return max(1, min(shoes, max(parallelism, ceil(shoes / shoes_per_task))))


KEY_LENGTH = 12
# A round_ev or sessions commit's record (Store.commit_partition's metadata) of the options its command was
# given that decide its rows, as the words of its command line: the repair line repeats them (repair.added_repair).
OPTIONS_GIVEN = "baccarat.options"
_PART = re.compile(r"part-(\d{12})-(\d{12})-(\w+)\.parquet")


def content_key(parameters: dict) -> str:
    """Part of every file name a job writes: jobs of other parameters never write over each other's
    files (an overwrite that fails leaves the old files whole), and equal keys mean equal rows."""
    return hashlib.sha256(json.dumps(parameters, sort_keys=True).encode()).hexdigest()[:KEY_LENGTH]


def options_record(given: tuple[str, ...] | None) -> dict:
    """A commit's record of the options a command was given (OPTIONS_GIVEN); none when not known (a plan
    not made by the command, which records nothing)."""
    return {} if given is None else {OPTIONS_GIVEN: list(given)}


def part_name(first: int, last: int, key: str) -> str:
    return f"part-{first:012d}-{last - 1:012d}-{key}.parquet"


def part_shoes(path: str) -> tuple[int, int] | None:
    """The shoes [first, last) of a file a task named with part_name, or None for another name."""
    found = _PART.fullmatch(path.rsplit("/", 1)[-1])
    return (int(found[1]), int(found[2]) + 1) if found else None


def part_key(path: str) -> str | None:
    """The content key of a file a task named with part_name, or None for another name."""
    found = _PART.fullmatch(path.rsplit("/", 1)[-1])
    return found[3] if found else None


def write_files(out, run_id: str, name: str, job: str, tables: tuple[str, ...],
                batches: Iterable[tuple[int, tuple[pa.Table, ...]]], report_batch: Callable[[int, int], None],
                **options) -> list[dict]:
    """One new Parquet file of run `run_id` named `name` per table of `tables`, where storage puts it
    (job: the writing job's tag), holding the tables `batches` yields, one per file, with the shoes done
    so far; `options` go to pyarrow's ParquetWriter. report_batch(shoes, rows of the first table) after each batch.
    Returns each file's table, path under OUT, rows, size and SHA-256. Runs inside a Spark task."""
    rows, writers = dict.fromkeys(tables, 0), {}
    with contextlib.ExitStack() as files:
        streams = {table: files.enter_context(out.create_file(table, run_id, name, job)) for table in tables}
        # pyarrow's buffer in front of the Python stream: its pages reach Python (and the hash) in large writes
        sinks = {table: pa.output_stream(stream, buffer_size=WRITE_BUFFER_BYTES) for table, stream in streams.items()}
        try:
            for shoes_done, parts in batches:
                for table, data in zip(tables, parts, strict=True):
                    if table not in writers:
                        writers[table] = pq.ParquetWriter(sinks[table], data.schema, **options)
                    writers[table].write_table(data)
                    rows[table] += data.num_rows
                report_batch(shoes_done, rows[tables[0]])
        except BaseException:
            for closing in (*writers.values(), *sinks.values()):  # a full disk fails the close too: not masking it
                with contextlib.suppress(Exception):
                    closing.close()
            raise
        for closing in (*writers.values(), *sinks.values()):  # the footers, then what the buffers hold
            closing.close()
    return [{"table": table, "path": streams[table].path, "rows": rows[table], "size": streams[table].size,
             "sha256": streams[table].digest.hexdigest()} for table in tables]


_EXCEPTION_LINE = re.compile(r"^(?:builtins\.)?([A-Za-z]+Error): (.+)$", re.MULTILINE)
# What Spark says when an executor's Python (PYSPARK_PYTHON) could not start a worker: the line it printed.
_WORKER_FAILED_TO_START = re.compile(r"Error from python worker:\s*\n\s*(.+)")
# The SparkContext stopped by its JVM's shutdown hook (spark-submit sent SIGTERM) while the job ran
_DRIVER_SHUT_DOWN = re.compile(r"SparkException: Job \d+ cancelled because SparkContext was shut down")
# PYSPARK_PYTHON naming no program that can run (a path that does not exist, a file not executable)
_WORKER_CANNOT_RUN = re.compile(r'java\.io\.IOException: (Cannot run program "[^"\n]*": error=\d+, [^\n]+)')


def _failure_message(text: str) -> str | None:
    """The one line for a failed Spark job, from what Spark says of it (PythonException, Py4JJavaError):
    what a task raised when that was an OSError (a full disk, ...), or the executors' Python lacking this
    package or a module it imports; None for any other failure (a bug)."""
    if started := _WORKER_FAILED_TO_START.search(text):
        return _lacking(f"Spark's Python workers could not start ({started.group(1).strip()})")
    if cannot := _WORKER_CANNOT_RUN.search(text):
        return _lacking(f"Spark's Python workers could not start ({cannot.group(1).strip()})")
    lines = _EXCEPTION_LINE.findall(text)
    if not lines:
        return None
    name, message = lines[-1]  # the last exception line of the task's traceback
    kind = getattr(builtins, name, None)
    if not isinstance(kind, type):
        return None
    if issubclass(kind, ImportError):
        return _lacking(f"a task failed: {name}: {message.strip()}")
    return message.strip() if issubclass(kind, OSError) else None


def _lacking(what: str) -> str:
    return f"{what}: the Python the executors run (PYSPARK_PYTHON) needs this package and its dependencies installed"


def _collect_reporting(tasks, report: Callable[[], None]) -> list:
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
        worker.join(REPORT_SECONDS)
        report()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["results"]


def collect_or_fail(tasks, report: Callable[[], None], failed: Callable[[str], Exception]) -> list:
    """The tasks' results, collected while `report` runs; when a task failed with an OSError (a full
    disk, ...) or the executors' Python could not start a worker, failed(its message) is raised instead,
    one line naming the log that holds the task's trace; a SparkContext shut down under the job (spark-submit
    sent SIGTERM) stops the command as SIGTERM does. Any other failure is a bug: it keeps its traceback."""
    try:
        return _collect_reporting(tasks, report)
    except Exception as error:
        if _DRIVER_SHUT_DOWN.search(str(error)):
            raise shut_down_under_us() from None
        message = _failure_message(str(error))
        if message is None:
            raise
        log = tasks.context.getConf().get(SPARK_LOG_FILE)
        raise failed(message + (f" (the task's trace is in {log})" if log else "")) from None


def run_ranges(context, ranges: list[tuple[int, int]], write: Callable, rounds_of: Callable[[dict], int],
               on_progress: Callable[[int, int], None] | None, failed: Callable[[str], Exception]) -> list[dict]:
    """Each shoe range [first, last) as one Spark task calling write(first, last, report_batch), which
    returns a dict and calls report_batch(shoes, rounds) with its range's counts so far after each batch.
    The results, in task order; on_progress(shoes, rounds) hears the whole job's counts meanwhile."""
    shoes_done, rounds_done = context.accumulator(0), context.accumulator(0)
    listener = progress.Listener.for_spark(context, [last - first for first, last in ranges])
    address = listener.address

    def task(indexed_range):
        index, (first, last) = indexed_range
        with progress.TaskProgress(address, index) as report_batch:
            result = write(first, last, report_batch)
        shoes_done.add(last - first)
        rounds_done.add(rounds_of(result))
        return result

    def report():
        listener.drain()
        if on_progress is not None:
            on_progress(max(shoes_done.value, listener.shoes), max(rounds_done.value, listener.rounds))

    with listener:
        return collect_or_fail(context.parallelize(list(enumerate(ranges)), len(ranges)).map(task), report, failed)
