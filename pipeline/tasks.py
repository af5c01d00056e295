"""Spark as the scheduler of the jobs that write files: contiguous ranges of shoes as tasks, collected
on a thread while the driver reports progress, and what a failed task's OSError said, as one line."""

import builtins
import re
import threading
from collections.abc import Callable
from math import ceil

REPORT_SECONDS = 0.1  # how often the driver reports progress while tasks run


def shoe_ranges(shoes: int, partitions: int) -> list[tuple[int, int]]:
    """Contiguous shoe ranges [first, last), one per task and file."""
    size = ceil(shoes / min(partitions, shoes))
    return [(first, min(first + size, shoes)) for first in range(0, shoes, size)]


def partitions_for(shoes: int, parallelism: int, shoes_per_task: int) -> int:
    """Enough tasks to use every core, and more for a big job so that a task stays bounded."""
    return max(1, min(shoes, max(parallelism, ceil(shoes / shoes_per_task))))


def part_name(first: int, last: int, key: str) -> str:
    return f"part-{first:012d}-{last - 1:012d}-{key}.parquet"


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
    disk, ...), failed(its message) is raised instead, one line. Any other failure is a bug: it keeps
    its traceback."""
    try:
        return _collect_reporting(tasks, report)
    except Exception as error:
        message = _os_error_message(str(error))
        if message is None:
            raise
        raise failed(message) from None
