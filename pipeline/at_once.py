"""Work on several items at once, in threads: for calls that wait on a store (a request each) or on an
engine that releases the GIL.

The threads are kept between calls: starting one waits for the GIL, which the threads already at work
hold (1.4 s over the 47 starts of one `marts` on S3, measured in docs/measurements.md). A call made from
one of those threads gets threads of its own: a thread that waits on the shared threads could otherwise
wait on itself."""

import contextvars
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import TypeVar

WAIT_STEP_SECONDS = 0.2
SHARED_THREADS = 32  # calls beyond it wait their turn; items are requests and engine scans, not locks
T = TypeVar("T")
R = TypeVar("R")

_WORKER = threading.local()


def _new_shared_threads() -> None:
    """The shared threads; a forked child has none of its parent's, so it starts its own."""
    global _SHARED
    _SHARED = ThreadPoolExecutor(SHARED_THREADS, thread_name_prefix="at-once")


_new_shared_threads()
os.register_at_fork(after_in_child=_new_shared_threads)


def each_at_once(work: Callable[[T], R], items: Iterable[T], threads: int | None = None) -> list[R]:
    """work(item) for every item, at most `threads` at once (default: all), each in a copy of the caller's
    context (its context variables), the results in the items' order; the first item's error raised,
    once every call has ended."""
    items = list(items)
    if not items:
        return []
    calls = [(contextvars.copy_context(), item) for item in items]
    outcomes: list[Future] = [Future() for _ in items]
    queue = iter(zip(calls, outcomes))
    taking, stopped = threading.Lock(), threading.Event()
    runners = min(threads or len(items), len(items))
    if not getattr(_WORKER, "busy", False):
        _run_all(_SHARED, runners, work, queue, taking, stopped, outcomes)
        return [outcome.result() for outcome in outcomes]
    own = ThreadPoolExecutor(runners)
    try:
        _run_all(own, runners, work, queue, taking, stopped, outcomes)
    finally:
        own.shutdown(wait=False)
    return [outcome.result() for outcome in outcomes]


def _run_all(pool: ThreadPoolExecutor, runners: int, work: Callable, queue: Iterator, taking: threading.Lock,
             stopped: threading.Event, outcomes: list[Future]) -> None:
    for _ in range(runners):
        pool.submit(_runner, work, queue, taking, stopped)
    try:
        # Waiting in short steps: a Ctrl-C that the kernel hands to a worker thread is then still seen
        # here, where a plain join would sleep through it until every item had been worked.
        while wait(outcomes, timeout=WAIT_STEP_SECONDS).not_done:
            pass
    finally:  # after a Ctrl-C, the items not started are dropped; the process is ending
        stopped.set()


def _runner(work: Callable, queue: Iterator, taking: threading.Lock, stopped: threading.Event) -> None:
    """Work the queue's items one after another until it is empty or the caller stopped waiting."""
    _WORKER.busy = True
    try:
        while not stopped.is_set():
            with taking:
                (context, item), outcome = next(queue, ((None, None), None))
            if outcome is None:
                return
            try:
                outcome.set_result(context.run(work, item))
            except BaseException as error:  # noqa: BLE001 (the caller raises it, in the items' order)
                outcome.set_exception(error)
    finally:
        _WORKER.busy = False
