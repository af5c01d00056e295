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
    call, runners = _Call(work, items), min(threads or len(items), len(items))
    if not getattr(_WORKER, "busy", False):
        return call.run(_SHARED, runners)
    own = ThreadPoolExecutor(runners)
    try:
        return call.run(own, runners)
    finally:
        own.shutdown(wait=False)


class _Call:
    """One call of each_at_once: the queue of its items (each with the caller's context and the Future of
    its outcome), taken one at a time by its runners until it is empty or the caller stops waiting."""

    def __init__(self, work: Callable, items: list):
        self.work = work
        self.outcomes: list[Future] = [Future() for _ in items]
        self.queue: Iterator = iter(zip([(contextvars.copy_context(), item) for item in items], self.outcomes))
        self.taking = threading.Lock()
        self.stopped = threading.Event()

    def run(self, pool: ThreadPoolExecutor, runners: int) -> list:
        """The outcomes, once `runners` threads of `pool` have worked every item."""
        for _ in range(runners):
            pool.submit(self._runner)
        try:
            # Waiting in short steps: a Ctrl-C that the kernel hands to a worker thread is then still seen
            # here, where a plain join would sleep through it until every item had been worked.
            while wait(self.outcomes, timeout=WAIT_STEP_SECONDS).not_done:
                pass
        finally:  # after a Ctrl-C, the items not started are dropped; the process is ending
            self.stopped.set()
        return [outcome.result() for outcome in self.outcomes]

    def _runner(self) -> None:
        """Work the queue's items one after another until it is empty or the caller stopped waiting."""
        _WORKER.busy = True
        try:
            while not self.stopped.is_set():
                with self.taking:
                    (context, item), outcome = next(self.queue, ((None, None), None))
                if outcome is None:
                    return
                try:
                    outcome.set_result(context.run(self.work, item))
                except BaseException as error:  # noqa: BLE001 (the caller raises it, in the items' order)
                    outcome.set_exception(error)
        finally:
            _WORKER.busy = False
