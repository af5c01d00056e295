"""Work on several items at once, in threads: for calls that wait on a store (a request each) or on an
engine that releases the GIL.

The threads are kept between calls: starting one waits for the GIL, which the threads already at work
hold (1.4 s over the 47 starts of one `marts` on S3, measured in docs/measurements.md). A call made from
one of those threads gets threads of its own: a thread that waits on the shared threads could otherwise
wait on itself."""

import contextlib
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
    runners = min(threads or len(items), len(items))
    with _threads_for_caller(runners) as pool:
        return _Call(work, items).run(pool, runners)


def alongside(background: Callable[[], T], foreground: Callable[[], R]) -> tuple[T, R]:
    """background() in another thread, in a copy of the caller's context, while this thread runs
    foreground() (the main thread alone takes signals); both results once both have ended, the
    background's error raised before the foreground's. A Ctrl-C here does not wait for the background."""
    with _threads_for_caller(1) as pool:
        later = pool.submit(contextvars.copy_context().run, _as_worker, background)
        try:
            ahead = foreground()
        except Exception:
            _ended([later])
            later.result()
            raise
        _ended([later])
        return later.result(), ahead


@contextlib.contextmanager
def _threads_for_caller(threads: int) -> Iterator[ThreadPoolExecutor]:
    """The shared threads, or for a caller that is one of them, `threads` of its own."""
    if not getattr(_WORKER, "busy", False):
        yield _SHARED
        return
    own = ThreadPoolExecutor(threads)
    try:
        yield own
    finally:
        own.shutdown(wait=False)


def _ended(futures: list[Future]) -> None:
    """Wait until every one of `futures` has ended, in short steps: a Ctrl-C that the kernel hands to
    another thread is then still seen here, where a plain wait would sleep through it."""
    while wait(futures, timeout=WAIT_STEP_SECONDS).not_done:
        pass


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
            _ended(self.outcomes)
        finally:  # after a Ctrl-C, the items not started are dropped; the process is ending
            self.stopped.set()
        return [outcome.result() for outcome in self.outcomes]

    def _runner(self) -> None:
        _as_worker(self._work_queue)

    def _work_queue(self) -> None:
        """Work the queue's items one after another until it is empty or the caller stopped waiting."""
        while not self.stopped.is_set():
            with self.taking:
                (context, item), outcome = next(self.queue, ((None, None), None))
            if outcome is None:
                return
            try:
                outcome.set_result(context.run(self.work, item))
            except BaseException as error:  # noqa: BLE001 (the caller raises it, in the items' order)
                outcome.set_exception(error)


def _as_worker(work: Callable[[], R]) -> R:
    """work(), in a thread that its own calls of each_at_once then know for one of the shared ones."""
    _WORKER.busy = True
    try:
        return work()
    finally:
        _WORKER.busy = False
