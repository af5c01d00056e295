"""pipeline/processes.py, which a Ctrl-C of a job uses to end the Python workers of its driver's JVM before
their temporary files go: here a stand-in for the JVM starts a stand-in for pyspark's daemon, which puts
itself in a process group of its own and forks a worker into it, as pyspark.daemon.manager does."""

import os
import subprocess
import sys
import textwrap

import pytest

from pipeline.processes import ended, groups_below, running_in

DAEMON = textwrap.dedent("""
    import os, time
    os.setpgid(0, 0)
    if os.fork() == 0:  # the worker
        time.sleep(60)
        os._exit(0)
    print(os.getpid(), flush=True)
    time.sleep(60)
""")
DRIVER = textwrap.dedent(f"""
    import subprocess, sys, time
    daemon = subprocess.Popen([sys.executable, "-c", {DAEMON!r}], stdout=subprocess.PIPE, text=True)
    print(daemon.stdout.readline().strip(), flush=True)
    time.sleep(60)
""")


@pytest.fixture
def driver():
    """The stand-in JVM, and the process group of its daemon and worker (their pids: two)."""
    process = subprocess.Popen([sys.executable, "-c", DRIVER], stdout=subprocess.PIPE, text=True)
    group = int(process.stdout.readline())
    try:
        yield process, group
    finally:
        process.kill()
        process.wait()
        ended({group}, 5)


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="processes are read from /proc")
def test_the_workers_group_is_found_before_the_driver_dies_and_ended_after(driver):
    process, group = driver
    assert groups_below(process.pid) == {group}  # not the driver's own group, which is this test's
    assert len(running_in({group})) == 2
    process.kill()  # the daemon and its worker outlive it
    process.wait()
    assert len(running_in({group})) == 2
    assert ended({group}, 5)
    assert running_in({group}) == set()
