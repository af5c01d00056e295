"""A command run with a standard stream closed (`>&-`, `2>&-`) ended in a traceback and exit 1, even after
its work was done (`simulate >&-` committed its run, then failed printing the line that says so), and
with stderr closed a command that succeeded exited 1. A closed stdout is now refused before any work, in
one line and status 2; a closed stderr loses the messages only, and the status stays true. A stream that
cannot show a character prints '?' (`PYTHONIOENCODING=ascii`), where it raised UnicodeEncodeError."""

import os
import subprocess
import sys

import pytest

ODDS_ROWS = 12  # `baccarat odds`' lines: title, header, three outcomes, title, header, five bets


def baccarat(args: list[str], cwd, standard_streams, env: dict | None = None) -> subprocess.CompletedProcess:
    """`baccarat ARGS` whose standard streams `standard_streams` (in the child, before it runs) has set."""
    return subprocess.run([sys.executable, "-m", "pipeline.cli", *args], capture_output=True, text=True,
                          timeout=60, cwd=cwd, preexec_fn=standard_streams, env=os.environ | (env or {}))


def stdout_closed():
    os.close(1)


def stderr_closed():
    os.close(2)


def stderr_read_only(path: str):
    """stderr on a file open for reading, as a launcher's script takes a closed descriptor 2 (pyenv's shims)."""
    def streams():
        os.dup2(os.open(path, os.O_RDONLY), 2)
    return streams


def test_a_closed_stdout_is_refused_before_any_work(tmp_path):
    written = tmp_path / "tables.md"
    done = baccarat(["docs", "--path", str(written)], tmp_path, stdout_closed)
    assert (done.returncode, done.stderr) == (
        2, "error: stdout is closed: to drop a command's output, send it to /dev/null\n")
    assert not written.exists()


@pytest.mark.parametrize("args", [["odds"], ["odds", "--rules", "nope"]])
def test_a_closed_stdout_ended_in_a_traceback(tmp_path, args):
    done = baccarat(args, tmp_path, stdout_closed)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr


@pytest.mark.parametrize("streams", ["closed", "read-only"])
def test_without_a_stderr_a_command_that_succeeds_exits_0_and_bad_input_2(tmp_path, streams):
    shim = tmp_path / "launcher"
    shim.write_text("#!/bin/sh\n")
    without = stderr_closed if streams == "closed" else stderr_read_only(str(shim))
    done = baccarat(["odds"], tmp_path, without)
    assert (done.returncode, done.stdout.count("\n")) == (0, ODDS_ROWS), done
    assert baccarat(["odds", "--rules", "nope"], tmp_path, without).returncode == 2
    assert shim.read_text() == "#!/bin/sh\n"


def test_a_stream_that_cannot_show_a_character_prints_a_question_mark(tmp_path):
    done = baccarat(["solve", "--rules", "chemin_de_fer"], tmp_path, None, {"PYTHONIOENCODING": "ascii"})
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert done.stdout.isascii() and "?" in done.stdout
