"""`baccarat vacuum` of a table whose run folder holds a symbolic link loop (`ln -s loop loop`): delta-rs's full
vacuum cannot list past it, and the one line gave its "Too many levels of symbolic links" and no advice. It
names the link and says to remove it; nothing is removed meanwhile."""

import os

import pyarrow as pa
import pytest
from deltalake import write_deltalake

from pipeline.storage import MIN_RETENTION_HOURS


@pytest.mark.parametrize("dry_run", ["--dry-run", "--no-dry-run"])
@pytest.mark.parametrize("target", ["loop", "other"])
def test_a_link_loop_in_a_run_folder_is_named_with_what_to_do(cli, tmp_path, dry_run, target):
    table = tmp_path / "marts" / "scratch"
    write_deltalake(str(table), pa.table({"x": [1], "run_id": ["r1"]}), partition_by=["run_id"])
    loop = table / "run_id=r1" / "loop"
    os.symlink(target, loop)
    if target == "other":  # loop -> other -> loop
        os.symlink("loop", loop.with_name("other"))
    status, out, err = cli("vacuum", "--out", tmp_path, "--retention-hours", str(MIN_RETENTION_HOURS), dry_run)
    assert (status, out) == (1, "") and err.count("\n") == 1, err
    assert err.startswith(f"error: table 'marts/scratch' cannot be vacuumed: {table / 'run_id=r1'}/"), err
    assert "is a symbolic link in a loop" in err and err.endswith("and vacuum again\n"), err
    assert os.path.islink(loop)
