"""`baccarat vacuum` said "removed 1 files": the count and its noun agree, for one file and for several."""

import os
import time

import pyarrow as pa
import pytest
from deltalake import write_deltalake

from pipeline.storage import MIN_RETENTION_HOURS


@pytest.mark.parametrize(("strays", "said"), [(0, "0 files"), (1, "1 file"), (2, "2 files")])
@pytest.mark.parametrize(("dry_run", "verb"), [("--dry-run", "would remove"), ("--no-dry-run", "removed")])
def test_vacuum_said_removed_1_files(cli, tmp_path, strays, said, dry_run, verb):
    table = tmp_path / "marts" / "scratch"
    write_deltalake(str(table), pa.table({"x": [1]}))
    old = time.time() - 3600 * (MIN_RETENTION_HOURS + 1)
    for number in range(strays):
        stray = table / f"never-committed-{number}.parquet"
        stray.write_bytes(b"PAR1")
        os.utime(stray, (old, old))
    status, out, err = cli("vacuum", "--out", tmp_path, "--retention-hours", str(MIN_RETENTION_HOURS), dry_run)
    assert (status, err) == (0, "")
    assert out.splitlines() == [f"{table}: {verb} {said}"]
