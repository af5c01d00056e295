"""A reader that closes the pipe before a command's output is written (`baccarat odds | head -1`): the
command exited 1 with nothing said (typer's answer to EPIPE) or 0, by chance. It is 141 (128 + SIGPIPE),
as a shell reports for any command whose reader went, and stderr stays empty. Output that cannot be
written at all (`> /dev/full`) is one line and status 1."""

import subprocess
import sys

import pytest
from cli_process import with_the_reader_gone

READER_GONE = 141


@pytest.mark.parametrize("args", [["odds"], ["odds", "--json"], ["risk", "--bet", "player", "--bankroll", "5",
                                                                   "--goal", "5"], ["--help"]])
def test_a_closed_pipe_exited_1_with_nothing_said(args, tmp_path):
    assert with_the_reader_gone(args, tmp_path) == (READER_GONE, b"")


def test_a_reader_that_takes_everything_gets_status_0(tmp_path):
    done = subprocess.run([sys.executable, "-m", "pipeline.cli", "odds"], capture_output=True, cwd=tmp_path,
                          timeout=120)
    assert (done.returncode, done.stderr) == (0, b"") and b"banker" in done.stdout


@pytest.mark.parametrize("args", [["odds"], ["odds", "--json"], ["roads", "--outcomes", "BPPTB", "--json"]])
def test_output_to_a_full_disk_was_a_traceback(args, tmp_path):
    """`baccarat odds > /dev/full`: the failed write ended in an OSError traceback. It is one line, status 1."""
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "pipeline.cli", *args], stdout=full, stderr=subprocess.PIPE,
                              text=True, cwd=tmp_path, timeout=120)
    assert (done.returncode, done.stderr) == (1, "error: No space left on device\n")


# stdout buffered as a file's is, so that the failed write comes with the flush at the command's end
FULL_DISK_AT_THE_LAST_FLUSH = """
import io, sys
sys.stdout = io.TextIOWrapper(open("/dev/full", "wb", buffering=1 << 20))
sys.argv = ["baccarat", "roads", "--outcomes", "BP", "--json"]
from pipeline.console import console
console()
"""


def test_output_lost_at_the_last_flush_was_status_1_with_nothing_said(tmp_path):
    done = subprocess.run([sys.executable, "-c", FULL_DISK_AT_THE_LAST_FLUSH], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    assert (done.returncode, done.stderr) == (1, "error: No space left on device\n")
