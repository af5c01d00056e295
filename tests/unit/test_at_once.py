"""each_at_once: every item's call in threads, the results in order, the first error after all end."""

import _thread
import threading
import time

import pytest

from pipeline.at_once import each_at_once


def test_the_results_come_in_the_items_order_whatever_order_the_calls_end_in():
    def slow_for_small(item: int) -> int:
        time.sleep(0.01 * (5 - item))
        return item * item

    assert each_at_once(slow_for_small, range(5)) == [0, 1, 4, 9, 16]


def test_the_calls_run_at_once_up_to_the_threads_given():
    running, most, lock = [0], [0], threading.Lock()

    def count(_: int) -> None:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.05)
        with lock:
            running[0] -= 1

    each_at_once(count, range(6), threads=2)
    assert most[0] == 2
    each_at_once(count, range(6))
    assert most[0] == 6


def test_the_first_items_error_is_raised_once_every_call_has_ended():
    ended = []

    def work(item: int) -> int:
        if item in (1, 3):
            raise ValueError(f"item {item}")
        time.sleep(0.05)
        ended.append(item)
        return item

    with pytest.raises(ValueError, match="item 1"):
        each_at_once(work, range(5))
    assert sorted(ended) == [0, 2, 4]


def test_no_items_is_no_results():
    assert each_at_once(lambda item: item, []) == []


def test_a_ctrl_c_waited_for_every_queued_item_before_it_was_seen():
    """The interrupt comes while the caller waits (as a SIGINT the kernel gave a worker thread): it is
    raised within a wait step, and the items not yet started never run."""
    started = []

    def slow(item: int) -> None:
        started.append(item)
        time.sleep(0.5)

    threading.Timer(0.3, _thread.interrupt_main).start()
    begun = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        each_at_once(slow, range(20), threads=2)
    assert time.monotonic() - begun < 2
    time.sleep(0.6)
    assert len(started) <= 4
