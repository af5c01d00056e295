"""The `baccarat` entry point (pipeline/console.py), run as the console script runs it, in a process of its own."""

import os
import signal
import subprocess
import sys

import pytest

INTERRUPTED = (130, "", "error: interrupted\n")
TERMINATED = (143, "", "error: terminated\n")  # SIGTERM (pipeline/termination.py)

# A real signal (argv[2], SIGINT by default), delivered as the module named by argv[1] is first imported.
INTERRUPT_ON_IMPORT = """
import os, signal, sys
module, stop = sys.argv[1], getattr(signal, (sys.argv[2:] or ["SIGINT"])[0])

class InterruptOnImport:
    def find_spec(self, name, path=None, target=None):
        if name == module:
            os.kill(os.getpid(), stop)
        return None

sys.modules.pop(module, None)
sys.meta_path.insert(0, InterruptOnImport())
sys.argv = ["baccarat", "odds", "--help"]
from pipeline.console import console
console()
"""


# numpy: while pipeline.cli imports its libraries. importlib.metadata: while the package `pipeline` itself
# imported (`baccarat`'s first line imports it, before pipeline/console.py's guard), it looked its version up
# (about 15 ms), and a Ctrl-C 20 to 30 ms after the start printed a traceback (a new user's trial).
@pytest.mark.parametrize("module", ["numpy", "importlib.metadata"])
def test_traceback_on_ctrl_c_while_baccarat_loads(module):
    done = subprocess.run([sys.executable, "-c", INTERRUPT_ON_IMPORT, module], capture_output=True, text=True,
                          timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == INTERRUPTED


def _ignoring_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize("background", [False, True], ids=["foreground", "started-by-a-shell-with-&"])
def test_sigterm_while_baccarat_loads_ended_it_silently(background):
    """SIGTERM ended the process at once, without a line. A shell starts a job in the background (`&`, a
    cron line) with SIGINT ignored: SIGTERM must not be ignored with it."""
    done = subprocess.run([sys.executable, "-c", INTERRUPT_ON_IMPORT, "numpy", "SIGTERM"], capture_output=True,
                          text=True, timeout=120, preexec_fn=_ignoring_sigint if background else None)
    assert (done.returncode, done.stdout, done.stderr) == TERMINATED


def test_console_runs_the_command_when_not_interrupted():
    done = subprocess.run([sys.executable, "-c", "from pipeline.console import console; console()",
                           "roads", "--outcomes", "BP", "--json"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith('{"bead_plate": [{"outcome": "B"')


# A command whose DuckDB query, on the main thread as `baccarat marts` runs its queries, meets a real SIGINT.
INTERRUPT_DURING_A_DUCKDB_QUERY = """
import os, signal, sys, threading
import duckdb
from pipeline.cli.app import app, main


@app.command("endless-query")
def endless_query():
    threading.Timer(0.25, os.kill, (os.getpid(), getattr(signal, sys.argv[1]))).start()
    # DuckDB 2.0 does not always see a Ctrl-C during a query: then the query ends (a few seconds, ten times
    # the wait above) and Python raises KeyboardInterrupt right after it. Either way the command must end in
    # one line and 130.
    duckdb.connect().execute("CREATE TEMP TABLE t AS SELECT sum(range) FROM range(2000000000)")

sys.exit(main(["endless-query"]))
"""


@pytest.mark.parametrize("stop, ended", [("SIGINT", INTERRUPTED), ("SIGTERM", TERMINATED)])
def test_ctrl_c_during_a_duckdb_query_was_a_runtime_error_traceback(stop, ended):
    """DuckDB turns the Ctrl-C into RuntimeError('Query interrupted') when it sees it: `baccarat marts` ended
    in its traceback with status 1. It is one line and 130, as a Ctrl-C anywhere else (when DuckDB misses
    it, Python raises KeyboardInterrupt once the query ends: the same line and status). SIGTERM, in a
    command run by main() as spark-submit's jobs/*.py run theirs, ended the process silently: one line, 143."""
    done = subprocess.run([sys.executable, "-c", INTERRUPT_DURING_A_DUCKDB_QUERY, stop], capture_output=True,
                          text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == ended


# A command run as the console script runs it, with an exit handler that finalisation would run.
FINISHED_COMMAND = """
import atexit, sys
marker = sys.argv[1]
atexit.register(lambda: open(marker, "w").write("finalised"))
sys.argv = ["baccarat", "roads", "--outcomes", "BP", "--json"]
from pipeline.console import console
console()
"""


def test_a_finished_command_ends_without_the_interpreter_s_finalisation_where_it_aborted_with_134(tmp_path):
    """Native threads still releasing Python objects could abort an exiting interpreter after the command
    had succeeded: the process now ends before finalisation, so no exit handler runs. (The exit-code loop
    of tests/functional/test_exit_codes.py runs every Delta command again and again on top of this.)"""
    marker = tmp_path / "finalised"
    done = subprocess.run([sys.executable, "-c", FINISHED_COMMAND, str(marker)], capture_output=True, text=True,
                          timeout=120)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith('{"bead_plate"')
    assert not marker.exists()


# `baccarat odds --rules banque` meeting a real SIGINT 0.2 s into its counting kernel (about 1 s of numba).
INTERRUPT_DURING_THE_BANQUE_COUNT = """
import os, signal, sys, threading
from pipeline.games import banque_counts
from pipeline.rule_sets import load_rule_set

banque_counts.count_shoe(load_rule_set("banque").draw, 1)  # compiled, or loaded from numba's cache, first
kernel = banque_counts._count

def interrupted(*args):
    threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT)).start()
    return kernel(*args)

banque_counts._count = interrupted
sys.argv = ["baccarat", "odds", "--rules", "banque"]
from pipeline.console import console
console()
"""


def test_ctrl_c_during_the_banque_count_was_a_segfault():
    """`timeout -s INT 1.5 baccarat odds --rules banque` ended in a segfault (exit 139) or a SystemError
    traceback: numba boxed the kernel's returned arrays by calling Python, where the pending Ctrl-C was
    raised. The kernel fills arrays it is given, and the command ends as any interrupted one."""
    done = subprocess.run([sys.executable, "-c", INTERRUPT_DURING_THE_BANQUE_COUNT], capture_output=True, text=True,
                          timeout=300)
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "error: interrupted\n")


# A command (argv) that meets a Ctrl-C as the console ends its Spark drivers, once main() has returned.
CTRL_C_AS_THE_DRIVERS_END = """
import os, signal, sys
from pipeline import spark
from pipeline.cli.app import app

end_drivers = spark._end_drivers

def ctrl_c_then_end(keep):
    os.kill(os.getpid(), signal.SIGINT)
    return end_drivers(keep)

spark._end_drivers = ctrl_c_then_end


@app.command("interrupted")
def interrupted():
    raise KeyboardInterrupt

sys.argv = ["baccarat", *sys.argv[1:]]
from pipeline.console import console
console()
"""


def test_a_second_ctrl_c_while_an_interrupted_command_ends_was_a_traceback():
    """`timeout --preserve-status -s INT 2.2 baccarat marts` printed "error: interrupted", then a KeyboardInterrupt
    traceback from drivers_ending_here (about 1 run in 40): the process is ending, and says so once."""
    # the second Ctrl-C: `timeout -s INT` signals the command and then its process group, or a user presses again
    done = subprocess.run([sys.executable, "-c", CTRL_C_AS_THE_DRIVERS_END, "interrupted"], capture_output=True,
                          text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "error: interrupted\n")


# A command that ends well, then meets a Ctrl-C that Python drops in a finalizer as the console ends its Spark
# drivers, while they take a few seconds more to end.
CTRL_C_DROPPED_AS_THE_DRIVERS_END = """
import sys, time
from pipeline import spark

end_drivers = spark._end_drivers

class InterruptedWhileFinalized:
    def __del__(self):
        raise KeyboardInterrupt

def dropped_then_end(keep):
    InterruptedWhileFinalized()
    started = time.monotonic()
    while time.monotonic() - started < 5:
        time.sleep(0.01)
    print("the drivers took their time", file=sys.stderr)
    return end_drivers(keep)

spark._end_drivers = dropped_then_end
sys.argv = ["baccarat", *sys.argv[1:]]
from pipeline.console import console
console()
"""

# A command that ends well, then meets a Ctrl-C while its buffered output is written at the console's flush.
CTRL_C_AT_THE_LAST_FLUSH = """
import io, os, signal, sys

class InterruptedOnce(io.RawIOBase):
    interrupted = False

    def writable(self):
        return True

    def write(self, data):
        if not InterruptedOnce.interrupted:
            InterruptedOnce.interrupted = True
            os.kill(os.getpid(), signal.SIGINT)
        return len(data)

sys.stdout = io.TextIOWrapper(io.BufferedWriter(InterruptedOnce(), 1 << 20))
sys.argv = ["baccarat", *sys.argv[1:]]
from pipeline.console import console
console()
"""


@pytest.mark.parametrize("script", [CTRL_C_AS_THE_DRIVERS_END, CTRL_C_DROPPED_AS_THE_DRIVERS_END,
                                    CTRL_C_AT_THE_LAST_FLUSH],
                         ids=["as-drivers-end", "dropped-as-drivers-end", "at-the-last-flush"])
def test_a_ctrl_c_after_the_command_returned_was_a_traceback(script):
    """A Ctrl-C between main()'s return and the process's end (a new user's trial: SIGINT to `baccarat
    simulate`'s process group as it ended) printed a KeyboardInterrupt traceback from console()."""
    command = ["roads", "--outcomes", "BP", "--json"]
    done = subprocess.run([sys.executable, "-c", script, *command], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr) == (130, "error: interrupted\n")


# A command that has said what it did on stdout, then meets a signal (argv[1]) or a failure ("fail").
STOPPED_AFTER_ITS_OUTPUT = """
import os, signal, sys, time
from pipeline.cli.app import app, main
from pipeline.errors import WorldFailure
from pipeline.termination import terminate_as_interrupt


@app.command("published-then-stopped")
def published_then_stopped():
    print("published warehouse.duckdb")
    if sys.argv[1] == "fail":
        raise WorldFailure("the report could not be written")
    os.kill(os.getpid(), getattr(signal, sys.argv[1]))
    time.sleep(60)

sys.exit(main(["published-then-stopped"]))
"""


@pytest.mark.parametrize("stop, line", [("SIGTERM", "error: terminated"), ("SIGINT", "error: interrupted"),
                                        ("fail", "error: the report could not be written")])
def test_a_log_taking_stdout_and_stderr_holds_the_stop_after_the_work_done_before_it(stop, line):
    """The docs' cron line sends both to one log: a `baccarat run` stopped as it wrote the report left
    "error: terminated" above "published ...", which was still in stdout's buffer (a file's is a block)."""
    buffered = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}  # as cron runs it
    done = subprocess.run([sys.executable, "-c", STOPPED_AFTER_ITS_OUTPUT, stop], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=120, env=buffered)
    assert done.stdout.splitlines() == ["published warehouse.duckdb", line]
