"""`baccarat` in a process of its own, for the tests of both tiers that must survive a read that blocks."""

import os
import re
import resource
import signal
import subprocess
import sys

# A job's plain progress line (pipeline/cli/jobs.py, Reporter), on stderr before anything else there.
PROGRESS_LINE = re.compile(r"(simulate|composition|backtest) \S+: [\d,]+/[\d,]+ shoes, ")


def baccarat(args: list[str], cwd) -> subprocess.CompletedProcess:
    """`baccarat ARGS` in a process of its own, given 60 s: a read that blocks or never ends fails the test."""
    return subprocess.run([sys.executable, "-m", "pipeline.cli", *args], capture_output=True, text=True,
                          timeout=60, cwd=cwd, env=os.environ | {"BACCARAT_LOG_DIR": str(cwd)})


def with_the_reader_gone(args: list[str], cwd, timeout: float = 120) -> tuple[int, bytes]:
    """`baccarat ARGS` whose stdout reader closes the pipe before the command writes a byte (`| head -0`
    at once); (status, stderr)."""
    command = subprocess.Popen([sys.executable, "-m", "pipeline.cli", *args], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, cwd=cwd, env=os.environ | {"BACCARAT_LOG_DIR": str(cwd)})
    command.stdout.close()
    err = command.stderr.read()
    return command.wait(timeout=timeout), err


def on_a_full_disk(command: list[str], size_limit: int, timeout: float) -> subprocess.CompletedProcess:
    """COMMAND in a process of its own whose files cannot grow past `size_limit` bytes (a write past it fails
    with EFBIG, as a full disk answers a write). The process writes no bytecode: CPython writes a .pyc with
    one unchecked write, so a module first imported there left a truncated .pyc in the tests' shared
    PYTHONPYCACHEPREFIX, and every later import of it failed ('marshal data too short')."""

    def small_files():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails instead of killing
        resource.setrlimit(resource.RLIMIT_FSIZE, (size_limit, size_limit))

    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, preexec_fn=small_files,
                          env=os.environ | {"PYTHONDONTWRITEBYTECODE": "1"})


def one_line_refusal(status: int, out: str, err: str, message: str) -> None:
    assert status == 2 and out == "", (status, out, err)
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err, err


def without_progress(err: str) -> str:
    """What a command printed on stderr but its jobs' progress lines: its errors and warnings."""
    return "".join(line for line in err.splitlines(keepends=True) if not PROGRESS_LINE.match(line))
