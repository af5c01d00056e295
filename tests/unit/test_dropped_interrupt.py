"""A Ctrl-C raised inside a finalizer: Python drops the KeyboardInterrupt ("Exception ignored in ...") and the
code goes on. pyspark's SIGINT handler raises wherever the main thread is, py4j's finalizers included, and a
command stopped so at its commit printed that traceback and exited 0 (a new user's trial)."""

import gc
import time

from pipeline.cli import exact
from pipeline.cli.app import _DroppedInterrupts

WORK_AFTER_THE_INTERRUPT_SECONDS = 20


class InterruptedWhileFinalized:
    def __del__(self):
        raise KeyboardInterrupt


def test_an_interrupt_dropped_in_a_finalizer_still_stops_the_command_with_130(cli, monkeypatch):
    real = exact.load_rule_set
    carried_on = []

    def interrupted_then_working(*args):
        InterruptedWhileFinalized()  # finalized at once: the interrupt is dropped here
        gc.collect()
        started = time.monotonic()
        while time.monotonic() - started < WORK_AFTER_THE_INTERRUPT_SECONDS:
            time.sleep(0.01)
        carried_on.append(True)
        return real(*args)

    monkeypatch.setattr(exact, "load_rule_set", interrupted_then_working)
    status, printed, err = cli("odds")
    assert (status, printed, err) == (130, "", "error: interrupted\n")
    assert not carried_on


def test_an_interrupt_dropped_as_a_command_ends_well_is_its_status_and_is_not_delivered_after_it(cli, monkeypatch):
    real = exact.load_rule_set

    def interrupted_at_the_end(*args):
        found = real(*args)
        InterruptedWhileFinalized()
        return found

    monkeypatch.setattr(exact, "load_rule_set", interrupted_at_the_end)
    monkeypatch.setattr(_DroppedInterrupts, "AGAIN_AFTER_SECONDS", 2.0)  # the command ends first
    status, _, err = cli("odds")
    assert status == 130 and err == "error: interrupted\n"
    time.sleep(3)  # a KeyboardInterrupt delivered now would end this test
