"""A file a command writes that the disk cannot take (pipeline/errors.py, cannot_write): a failure of the
world, exit 1, as README's table of exit statuses says of a full disk; a path that cannot be written is
bad input, exit 2."""

import errno
import resource
import signal
import subprocess
import sys

import pytest

from pipeline.errors import cannot_write


@pytest.mark.parametrize(("number", "status"), [
    (errno.ENOSPC, 1), (errno.EDQUOT, 1), (errno.EFBIG, 1), (errno.EIO, 1),
    (errno.EACCES, 2), (errno.ENOTDIR, 2), (errno.EROFS, 2), (None, 2),
])
def test_the_disk_s_failures_are_the_world_s_and_a_path_s_are_bad_input(number, status):
    error = cannot_write("the report /r/index.html", OSError(number, "what the system said"))
    assert (error.exit_status, str(error)) == (status, "cannot write the report /r/index.html: what the system said")


def _small_files():
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG) instead of killing
    resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))


def test_docs_path_on_a_disk_that_takes_no_more_was_bad_input_with_status_2(tmp_path):
    """`baccarat docs --path` on a full disk said "cannot write ...: No space left on device" and exited 2."""
    target = tmp_path / "tables.md"
    done = subprocess.run([sys.executable, "-m", "pipeline.cli", "docs", "--path", str(target)], capture_output=True,
                          text=True, timeout=120, preexec_fn=_small_files)
    assert (done.returncode, done.stdout, done.stderr) == (1, "", f"error: cannot write {target}: File too large\n")
