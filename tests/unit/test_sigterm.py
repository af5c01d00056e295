"""SIGTERM, as `timeout`, systemd or Kubernetes send it, ends `baccarat sql` as a Ctrl-C ends a command, in
one line, but `error: terminated` and status 143 (pipeline/termination.py): it ended the process at once and
silently. tests/unit/test_console.py holds the same while `baccarat` loads and during a command's DuckDB
query; tests/functional/test_exit_codes.py, during a job."""

import fcntl
import os
import select
import signal
import subprocess
import sys
import termios
import time

import duckdb
import pexpect
import pytest

TERMINATED = (143, "", "error: terminated\n")
HUNG_UP = (129, "", "error: hung up\n")
CONSOLE = [sys.executable, "-c", "from pipeline.console import console; console()"]

ENDLESS = "SELECT count(*) FROM range(1000000) a, range(1000000) b WHERE a.range + b.range < 0"


@pytest.fixture
def warehouse(tmp_path):
    path = tmp_path / "warehouse.duckdb"
    duckdb.connect(str(path)).close()
    return path


@pytest.mark.parametrize("stop, ended", [(signal.SIGTERM, TERMINATED), (signal.SIGHUP, HUNG_UP)],
                         ids=["SIGTERM", "SIGHUP"])
def test_sigterm_during_a_query_of_sql(warehouse, stop, ended):
    """SIGHUP (the terminal closed, `kill -HUP`) ended the process at once and silently, as SIGTERM did."""
    with subprocess.Popen([*CONSOLE, "sql", "--warehouse", str(warehouse), ENDLESS], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True) as sql:
        try:
            sql.communicate(timeout=2)
        except subprocess.TimeoutExpired:
            sql.send_signal(stop)
        out, err = sql.communicate(timeout=60)
    assert (sql.returncode, out, err) == ended


def test_a_command_started_with_sighup_ignored_keeps_it_ignored(warehouse):
    """`nohup baccarat ...` goes on when the terminal closes."""
    with subprocess.Popen([*CONSOLE, "sql", "--warehouse", str(warehouse), ENDLESS], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True,
                          preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN)) as sql:
        time.sleep(2)
        sql.send_signal(signal.SIGHUP)
        with pytest.raises(subprocess.TimeoutExpired):
            sql.communicate(timeout=2)
        sql.send_signal(signal.SIGTERM)
        out, err = sql.communicate(timeout=60)
    assert (sql.returncode, out, err) == TERMINATED


def _in_a_terminal_of_its_own():
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def test_the_sql_prompt_whose_terminal_closes_ends_with_129(warehouse, tmp_path):
    """Closing the terminal window: the kernel sends SIGHUP, and every later write to the terminal fails
    (EIO). The prompt died silently of the signal; caught, its one line then ended in an OSError traceback
    and status 1. It ends with 129, what it writes to the terminal dropped, as for a reader that left."""
    terminal, its_end = os.openpty()
    with subprocess.Popen([*CONSOLE, "sql", "--warehouse", str(warehouse)], stdin=its_end, stdout=its_end,
                          stderr=its_end, preexec_fn=_in_a_terminal_of_its_own,
                          env={**os.environ, "HOME": str(tmp_path)}) as sql:
        os.close(its_end)
        shown, deadline = b"", time.monotonic() + 60
        while b"baccarat> " not in shown and time.monotonic() < deadline:
            if select.select([terminal], [], [], 1)[0]:
                shown += os.read(terminal, 4096)
        assert b"baccarat> " in shown, shown
        os.close(terminal)
        assert sql.wait(timeout=60) == 129


@pytest.mark.parametrize("typed", ["", ENDLESS + ";"], ids=["at-the-prompt", "during-a-query"])
def test_sigterm_ends_the_sql_prompt_where_a_ctrl_c_only_cancels(warehouse, tmp_path, typed):
    """At a terminal Ctrl-C cancels the statement and the prompt goes on; SIGTERM ends the session."""
    prompt = pexpect.spawn(CONSOLE[0], [*CONSOLE[1:], "sql", "--warehouse", str(warehouse)], encoding="utf-8",
                           timeout=60, env={**os.environ, "HOME": str(tmp_path)}, dimensions=(40, 200))
    prompt.expect_exact("baccarat> ")
    if typed:
        prompt.sendline(typed)
        with pytest.raises(pexpect.TIMEOUT):  # the query runs
            prompt.expect_exact("baccarat> ", timeout=1)
    prompt.kill(signal.SIGTERM)
    prompt.expect(pexpect.EOF)
    prompt.close()
    assert (prompt.exitstatus, prompt.before.strip().splitlines()[-1]) == (143, "error: terminated")


LAUNCH_ENDED_BY_SIGTERM = """
import os, signal, sys
import pyspark.java_gateway
from pyspark import SparkConf
from pyspark.errors import PySparkRuntimeError
from pipeline import spark
from pipeline.termination import stop_status, terminate_as_interrupt

def launch(conf, popen_kwargs=None):
    os.kill(os.getpid(), signal.SIGTERM)  # sent to the process group, it ended the starting JVM too
    raise PySparkRuntimeError(errorClass="JAVA_GATEWAY_EXITED", messageParameters={})

pyspark.java_gateway.launch_gateway = launch
terminate_as_interrupt()
try:
    spark._start_driver(SparkConf(), log=None)
except KeyboardInterrupt:
    sys.exit(stop_status())
"""


def test_sigterm_to_the_process_group_while_the_jvm_starts_stops_the_command():
    """`timeout`'s or a supervisor's SIGTERM to the process group as Spark's JVM started ended the JVM too, and
    the command said "error: Spark's JVM stopped as it started: its output is in ..." with status 2 (bad input);
    with a JVM archive, it started the driver again without it, deleted the archive, and carried on to exit 0,
    the SIGTERM lost. No JVM here: the launch that the signal ended is pyspark's error."""
    done = subprocess.run([sys.executable, "-c", LAUNCH_ENDED_BY_SIGTERM], capture_output=True, text=True,
                          timeout=60)
    assert (done.returncode, done.stderr) == (143, "")


SECOND_STOP_DURING_THE_CLEAN_UP = """
import os, signal, sys
from types import SimpleNamespace
from pipeline import jobs
from pipeline.termination import terminate_as_interrupt

def workers_ended(context):
    os.kill(os.getpid(), getattr(signal, sys.argv[1]))  # the second stop, as the first one's clean-up starts
    return True

removed = []
jobs.ended_with_its_workers = workers_ended
out = SimpleNamespace(remove_temporaries=lambda table, run_id, job, stale_seconds: removed.append(table))
terminate_as_interrupt()
jobs._stopped(None, SimpleNamespace(tables=("rounds", "shoes"), run_id="r", job="j", out=out))
print(*removed)
"""


@pytest.mark.parametrize("second", ["SIGTERM", "SIGINT"])
def test_a_second_stop_during_a_stopped_jobs_clean_up_leaves_none_of_its_temporary_files(second):
    """Ctrl-C then SIGTERM, or two SIGTERMs (`timeout` signals the command, then its process group) 10 ms apart,
    mid-deal: the second cut the first one's clean-up short, and the job's temporary files stayed (4 of them,
    28 MB, until `baccarat vacuum`). No Spark here: the clean-up's wait for the workers meets the signal."""
    done = subprocess.run([sys.executable, "-c", SECOND_STOP_DURING_THE_CLEAN_UP, second], capture_output=True,
                          text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "rounds shoes\n", "")
