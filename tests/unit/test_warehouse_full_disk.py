"""A publish of the warehouse that the disk fails (pipeline/marts/publish.py), after every check of the
input has passed: a failure of the world, status 1, as README's table of exit statuses says."""

import duckdb
import pytest

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
