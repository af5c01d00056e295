"""A commit file of a table's log left empty (a writer killed, a disk that filled as it wrote) is a damaged
entry: verify names it, and `simulate --overwrite` sets the log aside from it (docs/repair.md). No JVM."""

import pyarrow as pa
import pytest

from pipeline.storage import DamagedLog, Store

SCHEMA = pa.schema({"shoe_id": pa.int64(), "run_id": pa.string()})


def store_of_three_runs(folder) -> Store:
    store = Store.parse(str(folder))
    for shoe in range(3):
        store.write_and_commit("rounds", f"run{shoe}", f"part-{shoe}.parquet", pa.table({"shoe_id": [shoe]}),
                               SCHEMA, ("test", shoe))
    return store


@pytest.mark.parametrize("version", [0, 2])
def test_an_empty_commit_is_the_damaged_entry_of_the_log(tmp_path, version):
    store = store_of_three_runs(tmp_path)
    (tmp_path / "rounds" / "_delta_log" / f"{version:020d}.json").write_bytes(b"")
    entry, what = store.damaged_log_entry("rounds")
    assert entry.endswith(f"{version:020d}.json") and what == f"commit {version} is empty (no actions)"


def test_a_log_whose_first_commit_is_empty_is_named_and_set_aside(tmp_path):
    store = store_of_three_runs(tmp_path)
    (tmp_path / "rounds" / "_delta_log" / f"{0:020d}.json").write_bytes(b"\n")
    with pytest.raises(DamagedLog, match="commit 0 is empty"):
        store.delta_table("rounds")
    assert store.set_log_aside("rounds") is not None
    assert store.delta_table("rounds") is None  # no version is whole: the runs are committed again
