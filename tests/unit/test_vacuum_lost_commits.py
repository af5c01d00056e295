"""`baccarat vacuum` of a store whose rounds log lost a run's commit (its newest commit file deleted) vacuumed
the tables before it, then ended in deltalake's "LogSegment end version 0 not the same as the specified end
version 1", with no repair. It now refuses before anything is removed, in verify's line and its repair: a
vacuum of that table would remove the run's files, which the repair commits again. No JVM."""

import os
import time
from dataclasses import replace

import pyarrow as pa
import pytest
from deltalake import write_deltalake
from test_run_counts import RUN

from pipeline import runs
from pipeline.storage import MIN_RETENTION_HOURS


@pytest.fixture
def run_whose_commit_is_lost(tmp_path, monkeypatch):
    """A rounds table at version 0 that holds run 'r', whose runs row records its commit at version 1, and
    an old file in marts/scratch that no commit adds."""
    write_deltalake(str(tmp_path / "rounds"), pa.table({"run_id": ["r"], "shoe_id": [0]}), partition_by=["run_id"])
    write_deltalake(str(tmp_path / "marts" / "scratch"), pa.table({"x": [1]}))
    stray = tmp_path / "marts" / "scratch" / "never-committed.parquet"
    stray.write_bytes(b"PAR1")
    old = time.time() - 3600 * (MIN_RETENTION_HOURS + 1)
    os.utime(stray, (old, old))
    monkeypatch.setattr(runs, "read_runs", lambda store: [replace(RUN, versions={"rounds": 1})])
    return stray


def test_a_run_whose_commit_the_log_lost_is_refused_before_anything_is_vacuumed(cli, tmp_path,
                                                                              run_whose_commit_is_lost):
    status, out, err = cli("vacuum", "--out", tmp_path, "--retention-hours", str(MIN_RETENTION_HOURS))
    assert (status, out) == (1, "") and err.count("\n") == 1, err
    assert err.startswith("error: run 'r': the rounds table does not hold the files its runs row lists (its log "
                          "ends at version 0, before the run's commit, version 1); repair: baccarat simulate ")
    assert err.rstrip().endswith("(vacuum waits for the repair: it would remove the files the repair commits again)")
    assert run_whose_commit_is_lost.exists()
