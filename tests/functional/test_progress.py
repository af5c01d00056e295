"""Progress within tasks: each task reports per batch of shoes over a best-effort channel to the driver."""

import socket
import time

import pytest

from pipeline import progress
from pipeline.jobs import run_job
from pipeline.rule_sets import load_rule_set
from pipeline.simulate import job
from pipeline.storage import Store


def drained(listener: progress.Listener, until, seconds: float = 5) -> progress.Listener:
    """Drain until `until(listener)` holds: a datagram on the loopback takes a moment to arrive."""
    deadline = time.monotonic() + seconds
    while not until(listener) and time.monotonic() < deadline:
        time.sleep(0.01)
        listener.drain()
    return listener


@pytest.fixture
def listener():
    with progress.Listener([10, 5], "127.0.0.1") as opened:
        assert opened.address is not None
        yield opened


def test_a_task_report_reaches_the_driver_and_never_goes_back(listener):
    with progress.TaskProgress(listener.address, 0) as report:
        report(4, 300)
        assert (drained(listener, lambda heard: heard.shoes == 4).shoes, listener.rounds) == (4, 300)
        report(2, 150)  # a retried attempt, starting again: the count stays where it was
        report(6, 450)
    with progress.TaskProgress(listener.address, 1) as report:
        report(5, 400)
    drained(listener, lambda heard: heard.shoes == 11)
    assert (listener.shoes, listener.rounds) == (6 + 5, 450 + 400)


@pytest.mark.parametrize("datagram", [
    b"wrong-token 0 3 100",
    b"{token} 2 3 100",  # no such range
    b"{token} -1 3 100",
    b"{token} 1 6 100",  # more shoes than the range holds
    b"{token} 0 -3 100",
    b"{token} 0 three 100",
    b"{token} 0 3",
    b"\xff\xfe garbage",
    b"",
])
def test_a_forged_or_malformed_datagram_is_ignored(listener, datagram):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
        sender.sendto(datagram.replace(b"{token}", listener.address.token.encode()), ("127.0.0.1",
                                                                                       listener.address.port))
        with progress.TaskProgress(listener.address, 1) as report:
            report(1, 7)  # a good one after it, so that the bad one has surely been read
        drained(listener, lambda heard: heard.shoes == 1)
    assert (listener.shoes, listener.rounds) == (1, 7)


def test_reporting_into_nothing_never_fails():
    with progress.Listener([3], "127.0.0.1") as closed:
        address = closed.address
    with progress.TaskProgress(address, 0) as report:  # nobody listens there any more
        report(1, 80)
        report(2, 160)
    with progress.TaskProgress(None, 0) as report:
        report(1, 80)
    unresolvable = progress.Listener([3], "no-such-host.invalid")
    unresolvable.drain()
    assert unresolvable.address is None and (unresolvable.shoes, unresolvable.rounds) == (0, 0)


def test_one_task_of_several_batches_reports_counts_between_zero_and_the_total(spark, tmp_path):
    """One task only: the accumulators would jump from 0 to the total, so every count in between
    came from within the task, after a batch."""
    shoes = 5 * job.SHOES_PER_BATCH
    plan = job.Plan("progress", load_rule_set("punto_banco"), 5, shoes, Store.parse(str(tmp_path)).check_writable(),
                    partitions=1)
    heard = []
    record = run_job(spark, plan, lambda shoes_done, rounds_done: heard.append((shoes_done, rounds_done)))
    between = [done for done, _ in heard if 0 < done < shoes]
    assert between, heard
    assert all(done % job.SHOES_PER_BATCH == 0 for done in between), between
    assert heard == sorted(heard) and heard[-1] == (shoes, record.rounds)
