"""SIGTERM, as a scheduler's timeout, `timeout`, systemd or Kubernetes send it, ends a command as a Ctrl-C
does, in one line, but `error: terminated` and status 143 (pipeline/termination.py). It ended the process
at once and silently (a job's temporary files stayed until `baccarat vacuum`: tests/functional/
test_exit_codes.py)."""

import os
import signal
import subprocess
import sys

import duckdb
import pexpect
import pytest

CONSOLE = [sys.executable, "-c", "from pipeline.console import console; console()"]
TERMINATED = (143, "", "error: terminated\n")

# A real SIGTERM, delivered as numpy is first imported (while pipeline.cli loads its libraries).
TERMINATE_ON_IMPORT = """
import os, signal, sys

class TerminateOnImport:
    def find_spec(self, name, path=None, target=None):
        if name == "numpy":
            os.kill(os.getpid(), signal.SIGTERM)
        return None

sys.modules.pop("numpy", None)
sys.meta_path.insert(0, TerminateOnImport())
sys.argv = ["baccarat", "odds", "--help"]
from pipeline.console import console
console()
"""


def _ignoring_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize("background", [False, True], ids=["foreground", "started-by-a-shell-with-&"])
def test_sigterm_while_baccarat_loads(background):
    """A shell starts a job in the background (`&`, a cron line) with SIGINT ignored: SIGTERM must not
    be ignored with it."""
    done = subprocess.run([sys.executable, "-c", TERMINATE_ON_IMPORT], capture_output=True, text=True, timeout=120,
                          preexec_fn=_ignoring_sigint if background else None)
    assert (done.returncode, done.stdout, done.stderr) == TERMINATED


TERMINATE_DURING_A_DUCKDB_QUERY = """
import os, signal, sys, threading
import duckdb
from pipeline.cli.app import app, main


@app.command("endless-query")
def endless_query():
    threading.Timer(0.25, os.kill, (os.getpid(), signal.SIGTERM)).start()
    duckdb.connect().execute("CREATE TEMP TABLE t AS SELECT sum(range) FROM range(2000000000)")

sys.exit(main(["endless-query"]))
"""


def test_sigterm_during_a_duckdb_query_of_a_command_run_by_main():
    """spark-submit's jobs/*.py call main() themselves, without the console script."""
    done = subprocess.run([sys.executable, "-c", TERMINATE_DURING_A_DUCKDB_QUERY], capture_output=True, text=True,
                          timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == TERMINATED


ENDLESS = "SELECT count(*) FROM range(1000000) a, range(1000000) b WHERE a.range + b.range < 0"


@pytest.fixture
def warehouse(tmp_path):
    path = tmp_path / "warehouse.duckdb"
    duckdb.connect(str(path)).close()
    return path


def test_sigterm_during_a_query_of_sql(warehouse):
    with subprocess.Popen([*CONSOLE, "sql", "--warehouse", str(warehouse), ENDLESS], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True) as sql:
        try:
            sql.communicate(timeout=2)
        except subprocess.TimeoutExpired:
            sql.send_signal(signal.SIGTERM)
        out, err = sql.communicate(timeout=60)
    assert (sql.returncode, out, err) == TERMINATED


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
