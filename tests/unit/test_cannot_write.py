"""A file a command writes that the disk cannot take (pipeline/errors.py, cannot_write): a failure of the
world, exit 1, as README's table of exit statuses says of a full disk; a path that cannot be written is
bad input, exit 2."""

import errno
import subprocess
import sys

import pytest
from cli_process import on_a_full_disk

from pipeline.errors import cannot_write


@pytest.mark.parametrize(("number", "status"), [
    (errno.ENOSPC, 1), (errno.EDQUOT, 1), (errno.EFBIG, 1), (errno.EIO, 1),
    (errno.EACCES, 2), (errno.ENOTDIR, 2), (errno.EROFS, 2), (None, 2),
])
def test_the_disk_s_failures_are_the_world_s_and_a_path_s_are_bad_input(number, status):
    error = cannot_write("the report /r/index.html", OSError(number, "what the system said"))
    assert (error.exit_status, str(error)) == (status, "cannot write the report /r/index.html: what the system said")


def test_docs_path_on_a_disk_that_takes_no_more_was_bad_input_with_status_2(tmp_path):
    """`baccarat docs --path` on a full disk said "cannot write ...: No space left on device" and exited 2."""
    target = tmp_path / "tables.md"
    done = on_a_full_disk([sys.executable, "-m", "pipeline.cli", "docs", "--path", str(target)], 1000, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (1, "", f"error: cannot write {target}: File too large\n")


def test_a_command_on_a_full_disk_leaves_the_next_command_its_modules(tmp_path, monkeypatch):
    """The full-disk tests' process wrote every module it compiled as a .pyc cut at the size limit into the
    shared PYTHONPYCACHEPREFIX; a later `baccarat odds` in the unit tier then exited 130 (click takes the
    import's EOFError for a Ctrl-D). The next command runs as if the full disk had never been."""
    monkeypatch.setenv("PYTHONPYCACHEPREFIX", str(tmp_path / "pycache"))
    on_a_full_disk([sys.executable, "-m", "pipeline.cli", "docs", "--path", str(tmp_path / "t.md")], 1000, timeout=120)
    done = subprocess.run([sys.executable, "-m", "pipeline.cli", "odds", "--json"], capture_output=True, text=True,
                          timeout=120)
    assert (done.returncode, done.stderr) == (0, "")
