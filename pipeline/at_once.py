"""Work on several items at once, in threads: for calls that wait on a store (a request each) or on an
engine that releases the GIL."""

import contextvars
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def each_at_once(work: Callable[[T], R], items: Iterable[T], threads: int | None = None) -> list[R]:
    """work(item) for every item, at most `threads` at once (default: all), each in a copy of the caller's
    context (its context variables), the results in the items' order; the first item's error raised,
    once every call has ended."""
    items = list(items)
    if not items:
        return []
    with ThreadPoolExecutor(threads or len(items)) as pool:
        calls = [pool.submit(contextvars.copy_context().run, work, item) for item in items]
    return [call.result() for call in calls]
