"""Work on several items at once, in threads: for calls that wait on a store (a request each) or on an
engine that releases the GIL."""

import contextvars
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, wait
from typing import TypeVar

WAIT_STEP_SECONDS = 0.2
T = TypeVar("T")
R = TypeVar("R")


def each_at_once(work: Callable[[T], R], items: Iterable[T], threads: int | None = None) -> list[R]:
    """work(item) for every item, at most `threads` at once (default: all), each in a copy of the caller's
    context (its context variables), the results in the items' order; the first item's error raised,
    once every call has ended."""
    items = list(items)
    if not items:
        return []
    pool = ThreadPoolExecutor(threads or len(items))
    try:
        calls = [pool.submit(contextvars.copy_context().run, work, item) for item in items]
        # Waiting in short steps: a Ctrl-C that the kernel hands to a worker thread is then still seen
        # here, where a plain join would sleep through it until every item had been worked.
        while wait(calls, timeout=WAIT_STEP_SECONDS).not_done:
            pass
    finally:  # after a Ctrl-C, the items not started are dropped; the process is ending
        pool.shutdown(wait=False, cancel_futures=True)
    return [call.result() for call in calls]
