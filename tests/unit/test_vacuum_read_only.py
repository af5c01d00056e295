"""`baccarat vacuum` of a data folder that cannot be written (a read-only mount) ended in deltalake's
traceback, exit 1, when it came to write a table's checkpoint. It is now refused before anything is
removed, in one line and status 2, as marts and report refuse it; --dry-run, which writes nothing, still
lists; and a table whose checkpoint cannot be written all the same is one line, status 1."""

import errno
import os
import time

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from deltalake.exceptions import DeltaError

from pipeline.storage import MIN_RETENTION_HOURS
from pipeline.storage import layout

READ_ONLY = "Read-only file system"


@pytest.fixture
def table_with_a_stray(tmp_path):
    """OUT/marts/scratch, a Delta table, and an old file in it that no commit adds."""
    table = tmp_path / "marts" / "scratch"
    write_deltalake(str(table), pa.table({"x": [1]}))
    stray = table / "never-committed.parquet"
    stray.write_bytes(b"PAR1")
    old = time.time() - 3600 * (MIN_RETENTION_HOURS + 1)
    os.utime(stray, (old, old))
    return table, stray


def vacuum(cli, out, *options):
    return cli("vacuum", "--out", out, "--retention-hours", str(MIN_RETENTION_HOURS), *options)


def test_a_folder_that_cannot_be_written_is_refused_before_anything_goes(cli, tmp_path, table_with_a_stray,
                                                                        monkeypatch):
    _, stray = table_with_a_stray

    def read_only(*args, **kwargs):
        raise OSError(errno.EROFS, READ_ONLY)

    monkeypatch.setattr(layout.tempfile, "TemporaryFile", read_only)
    status, out, err = vacuum(cli, tmp_path)
    assert (status, out) == (2, "") and err == f"error: output path {tmp_path} is not writable: {READ_ONLY}\n"
    assert stray.exists()
    status, out, err = vacuum(cli, tmp_path, "--dry-run")
    assert (status, err) == (0, "") and "would remove 1 file" in out


def test_a_checkpoint_that_cannot_be_written_is_one_line(cli, tmp_path, table_with_a_stray, monkeypatch):
    def refused(self):
        raise DeltaError(f"Kernel error: Unable to open file checkpoint.parquet: {READ_ONLY} (os error 30)")

    monkeypatch.setattr(DeltaTable, "create_checkpoint", refused)
    status, _, err = vacuum(cli, tmp_path)
    assert status == 1 and err.count("\n") == 1, err
    assert err.startswith("error: table 'marts/scratch' cannot be vacuumed: ") and READ_ONLY in err
