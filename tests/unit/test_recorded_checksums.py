"""The SHA-256 of the files a commit adds, recorded in the commit (its commitInfo) and read back with the
committed files: by the file's own commit, none for a file committed without one, and a file written again
in place with other bytes is committed again with its new checksum. A local Delta table, no JVM."""

import hashlib

import pyarrow as pa

from pipeline.storage import Store

SCHEMA = pa.schema({"shoe_id": pa.int64(), "run_id": pa.string()})


def written(store: Store, run_id: str, shoes: list[int], hashed: bool = True) -> dict:
    """A file of run_id's shoes, not committed: its entry as a job's task records it (with its sha256, or as a
    writer that does not hash)."""
    entry = store.write_file("round_ev", run_id, "part-0.parquet", pa.table({"shoe_id": shoes}))
    assert entry["sha256"] == hashlib.sha256((store.local_path(entry["path"])).read_bytes()).hexdigest()
    return entry if hashed else {key: value for key, value in entry.items() if key != "sha256"}


def commit(store: Store, run_id: str, files: list[dict], attempt: int = 1) -> int:
    return store.commit_partition("round_ev", run_id, files, SCHEMA, (f"test:{run_id}", attempt))


def test_each_committed_file_reads_back_with_the_checksum_its_commit_recorded(tmp_path):
    store = Store.parse(str(tmp_path))
    first, second = written(store, "first", [1, 2]), written(store, "second", [3])
    commit(store, "first", [first])
    for version in range(12):  # past a checkpoint, and past the first step of the history read
        commit(store, f"other{version}", [written(store, f"other{version}", [version])])
    commit(store, "second", [second])
    assert [f["sha256"] for f in store.partition_files("round_ev", "first", checksums=True)] == [first["sha256"]]
    assert store.committed_files("round_ev", ["second"], checksums=True) == [second]
    assert "sha256" not in store.partition_files("round_ev", "first")[0]  # read only when asked


def test_a_file_committed_without_a_checksum_has_none(tmp_path):
    store = Store.parse(str(tmp_path))
    commit(store, "old", [written(store, "old", [1], hashed=False)])
    assert [f["sha256"] for f in store.partition_files("round_ev", "old", checksums=True)] == [None]
    again = written(store, "old", [1])  # the same bytes, hashed: the commit records their checksum
    assert commit(store, "old", [again], 2) == 2
    assert [f["sha256"] for f in store.partition_files("round_ev", "old", checksums=True)] == [again["sha256"]]


def test_a_file_written_again_in_place_with_other_bytes_is_committed_again_with_its_checksum(tmp_path):
    store = Store.parse(str(tmp_path))
    assert commit(store, "run", [written(store, "run", [1])]) == 1
    assert commit(store, "run", [written(store, "run", [1])], 2) == 1  # the same bytes: nothing to commit
    other = written(store, "run", [7])
    assert commit(store, "run", [other], 3) == 2
    assert store.partition_files("round_ev", "run", checksums=True) == [other]
