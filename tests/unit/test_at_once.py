"""each_at_once: every item's call in threads, the results in order, the first error after all end."""

import _thread
import concurrent.futures._base
import os
import sys
import threading
import time

import pytest

from pipeline.at_once import SHARED_THREADS, alongside, each_at_once

futures_base = concurrent.futures._base.__file__


def test_the_results_come_in_the_items_order_whatever_order_the_calls_end_in():
    def slow_for_small(item: int) -> int:
        time.sleep(0.01 * (5 - item))
        return item * item

    assert each_at_once(slow_for_small, range(5)) == [0, 1, 4, 9, 16]


def test_the_calls_run_at_once_up_to_the_threads_given():
    """Each call waits at a barrier for as many calls as should run at once: the barrier is passed only
    when that many do (a 50 ms sleep instead let the first call end before the sixth began, under load)."""
    running, most, lock = [0], [0], threading.Lock()

    def count_at(barrier: threading.Barrier):
        def count(_: int) -> None:
            with lock:
                running[0] += 1
                most[0] = max(most[0], running[0])
            barrier.wait(timeout=10)  # a pool that runs fewer at once breaks the barrier
            time.sleep(0.01)  # a call that should wait has its chance to start, and to be counted
            with lock:
                running[0] -= 1
        return count

    each_at_once(count_at(threading.Barrier(2)), range(6), threads=2)
    assert most[0] == 2
    each_at_once(count_at(threading.Barrier(6)), range(6))
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


def waiting_in_wait(thread: threading.Thread) -> bool:
    """Whether `thread` is inside concurrent.futures.wait now."""
    frame = sys._current_frames().get(thread.ident)
    while frame is not None and not (frame.f_code.co_name == "wait" and frame.f_code.co_filename == futures_base):
        frame = frame.f_back
    return frame is not None


def test_a_ctrl_c_waited_for_every_queued_item_before_it_was_seen():
    """The interrupt comes while the caller waits (as a SIGINT the kernel gave a worker thread), once the
    first two calls have started and while they still run: it is raised within a wait step, and the items
    not yet started never run. (A 0.3 s timer instead could come after the first calls had ended.)"""
    started, two_started, release = [], threading.Event(), threading.Event()
    caller = threading.current_thread()

    def held(item: int) -> None:
        started.append(item)
        if len(started) == 2:
            two_started.set()
        if item < 2:
            release.wait(timeout=5)  # unreleased, the queued items would start after 5 s

    def interrupt_the_waiting_caller() -> None:
        deadline = time.monotonic() + 10
        if not two_started.wait(timeout=10):
            return
        while not waiting_in_wait(caller) and time.monotonic() < deadline:
            time.sleep(0.001)
        if time.monotonic() < deadline:
            _thread.interrupt_main()

    threading.Thread(target=interrupt_the_waiting_caller, daemon=True).start()
    begun = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            each_at_once(held, range(20), threads=2)
        assert time.monotonic() - begun < 2
    finally:
        release.set()
    time.sleep(0.1)
    assert sorted(started) == [0, 1]


def test_the_threads_are_kept_between_calls():
    """Starting a thread waits for the GIL that the threads at work hold: the calls reuse the same ones."""
    def thread_of(_: int) -> threading.Thread:
        time.sleep(0.001)
        return threading.current_thread()  # kept: an ident may be reused by a later thread, an object not

    seen = {thread for _ in range(30) for thread in each_at_once(thread_of, range(4))}
    assert len(seen) <= SHARED_THREADS


def test_calls_made_from_inside_calls_end_even_with_every_shared_thread_waiting_on_them():
    """Each outer item waits on an inner call: with the shared threads all outer items, an inner call
    queued behind them would wait for ever."""
    def outer(item: int) -> int:
        return sum(each_at_once(lambda inner: inner * item, range(3)))

    assert each_at_once(outer, range(2 * SHARED_THREADS)) == [3 * item for item in range(2 * SHARED_THREADS)]


def test_a_forked_child_works_its_items_on_threads_of_its_own():
    each_at_once(lambda item: item, range(4))  # the parent's shared threads are started and idle
    child = os.fork()
    if child == 0:
        os._exit(0 if each_at_once(lambda item: item * 2, range(4)) == [0, 2, 4, 6] else 1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_alongside_runs_both_at_once_and_gives_both_results():
    """Each side waits at a barrier for the other: it is passed only when they run together."""
    together = threading.Barrier(2, timeout=10)

    def side(name: str):
        def run() -> str:
            together.wait()
            return name
        return run

    assert alongside(side("background"), side("foreground")) == ("background", "foreground")


def test_alongside_raises_the_backgrounds_error_first_once_both_have_ended():
    ended = []

    def background():
        time.sleep(0.05)
        ended.append("background")
        raise LookupError("no such run")

    def foreground():
        ended.append("foreground")
        raise ValueError("no such master")

    with pytest.raises(LookupError):
        alongside(background, foreground)
    assert sorted(ended) == ["background", "foreground"]


def test_a_foreground_error_is_raised_once_the_background_has_ended():
    """The background's work (which may write) is never cut off by the foreground's error."""
    ended = []

    def background():
        time.sleep(0.05)
        ended.append("background")

    def foreground():
        raise ValueError("no such master")

    with pytest.raises(ValueError):
        alongside(background, foreground)
    assert ended == ["background"]


def test_the_background_sees_the_callers_context_variables():
    import contextvars

    chosen = contextvars.ContextVar("chosen", default="unset")
    chosen.set("the caller's")
    assert alongside(chosen.get, lambda: None) == ("the caller's", None)
