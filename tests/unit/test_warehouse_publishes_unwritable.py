"""The folder of the warehouse's publishes that cannot be written (read-only, or a file in its place): the
folder beside it was checked writable, so `baccarat marts` built and committed every run's marts, then failed
to publish (exit 1). It is refused with the warehouse's path, before anything is built (exit 2), as a
warehouse in a folder that cannot be written is (docs/serving.md). No JVM."""

import pytest

from pipeline.errors import BaccaratError
from pipeline.marts import publish


def test_a_publishes_folder_that_cannot_be_written_is_refused_before_anything_is_built(tmp_path):
    target = tmp_path / "warehouse.duckdb"
    target.with_name(target.name + publish.PUBLISHES).write_text("not a folder\n")
    with pytest.raises(BaccaratError, match=r"^cannot write the warehouse .*warehouse\.duckdb: Not a directory$"):
        publish.check_warehouse_target(target)


def test_a_warehouse_with_no_publishes_yet_is_not_refused(tmp_path):
    assert publish.check_warehouse_target(tmp_path / "w.duckdb") == tmp_path / "w.duckdb"
