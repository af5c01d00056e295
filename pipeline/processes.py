"""Processes as Linux shows them in /proc: the process groups below a process, ended and waited for
(bounded). Spark's driver JVM starts the daemon that forks the Python workers of its tasks, and the
daemon puts itself and every worker it forks in a process group of its own (pyspark.daemon.manager),
so that a worker forked after the groups were read is in one of them too."""

import contextlib
import os
import signal
import time
from pathlib import Path

PROC = Path("/proc")
POLL_SECONDS = 0.02


def process_table() -> dict[int, tuple[int, int, str]]:
    """pid -> (parent pid, process group, state) of every process; empty where there is no /proc."""
    table = {}
    for stat in PROC.glob("[0-9]*/stat"):
        try:  # the command's name, in parentheses, may hold spaces: the fields follow its last ")"
            state, parent, group = stat.read_text().rsplit(")", 1)[1].split()[:3]
        except (OSError, ValueError):  # gone meanwhile
            continue
        table[int(stat.parent.name)] = (int(parent), int(group), state)
    return table


def descendants(pid: int, table: dict[int, tuple[int, int, str]] | None = None) -> set[int]:
    """The processes below `pid` (in `table`, default the current process_table())."""
    table = process_table() if table is None else table
    below, todo = set(), [pid]
    while todo:
        parent = todo.pop()
        children = {child for child, (ppid, _, _) in table.items() if ppid == parent} - below
        below |= children
        todo.extend(children)
    return below


def groups_below(pid: int) -> set[int]:
    """The process groups of `pid`'s descendants, less `pid`'s own group."""
    table = process_table()
    return {table[child][1] for child in descendants(pid, table)} - {table.get(pid, (0, 0, ""))[1], 0}


def _runs(state: str) -> bool:
    return state not in ("Z", "X")  # a zombie has ended: it only waits to be reaped


def running(pids: set[int]) -> set[int]:
    """The processes among `pids` that still run."""
    table = process_table()
    return {pid for pid in pids if pid in table and _runs(table[pid][2])}


def running_in(groups: set[int]) -> set[int]:
    """The processes of `groups` that still run."""
    return {pid for pid, (_, group, state) in process_table().items() if group in groups and _runs(state)}


def ended(groups: set[int], seconds: float) -> bool:
    """Kill every process of `groups` (SIGKILL) and wait for them to be gone, at most `seconds`; whether
    they are (never where there is no /proc to tell)."""
    if not PROC.is_dir():
        return False
    for group in groups:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signal.SIGKILL)
    deadline = time.monotonic() + seconds
    while running_in(groups):
        if time.monotonic() > deadline:
            return False
        time.sleep(POLL_SECONDS)
    return True
