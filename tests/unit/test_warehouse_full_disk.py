"""A publish of the warehouse that the disk fails (pipeline/marts/publish.py), after every check of the
input has passed: a failure of the world, status 1, as README's table of exit statuses says."""

import sys

import duckdb
import pytest
from cli_process import on_a_full_disk

from pipeline.errors import WorldFailure
from pipeline.marts import publish
from pipeline.storage import Store


def test_a_full_disk_while_publishing_was_bad_input_with_status_2(tmp_path, monkeypatch):
    """DuckDB's commit of the new file failing with 'No space left on device' was a BaccaratError (exit 2,
    bad input) though the warehouse's path had been checked writable before anything was built."""
    def full_disk(*args):
        raise duckdb.IOException('Could not write file "warehouse.duckdb.wal": No space left on device')

    monkeypatch.setattr(publish, "_build", full_disk)
    target = tmp_path / "warehouse.duckdb"
    full = r"^cannot write the warehouse .*: Could not write file .*: No space left on device$"
    with pytest.raises(WorldFailure, match=full):
        publish.publish_warehouse(Store.parse(str(tmp_path)), target)
    assert not target.exists() and list((tmp_path / ("warehouse.duckdb" + publish.PUBLISHES)).iterdir()) == []


PUBLISH = """
import sys
from pathlib import Path
from pipeline.marts import publish
from pipeline.storage import Store
out = Path(sys.argv[1])
publish.publish_warehouse(Store.parse(str(out)), out / "warehouse.duckdb")
"""


def test_a_disk_that_fills_at_the_checkpoint_was_a_published_warehouse_without_tables(tmp_path):
    """The tables fit in DuckDB's journal but not in the file: the checkpoint at close failed silently, the
    journal went with the temporary, and a warehouse of no tables was sealed and published (`baccarat run` on a
    20 MB tmpfs said 'published', then 'Catalog Error: Table with name outcome_summary does not exist!')."""
    done = on_a_full_disk([sys.executable, "-c", PUBLISH, str(tmp_path)], 300_000, timeout=120)
    assert done.returncode == 1 and "cannot write the warehouse" in done.stderr, done.stderr
    assert not (tmp_path / "warehouse.duckdb").exists()
    assert list((tmp_path / ("warehouse.duckdb" + publish.PUBLISHES)).iterdir()) == []
