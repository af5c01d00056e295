"""On an object store, where each request is a round trip, the checks of a run's files before anything is
built (their sizes, their Parquet footers) ask for them side by side, not one after another. No JVM."""

import threading

import fsspec
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from pipeline.storage import Store

FILES = 8
AT_ONCE = 4  # requests the handler waits for before it answers any


class MeetingHandler(pafs.FSSpecHandler):
    """A bucket kept in a local folder whose answers to a file's size or footer wait until AT_ONCE
    requests are in flight: asked one after another, the first waits in vain and fails."""

    def __init__(self, root):
        super().__init__(fsspec.filesystem("file"))
        self.root = root
        self.meeting = threading.Barrier(AT_ONCE, timeout=10)

    def get_file_info(self, paths):
        self.meeting.wait()
        return super().get_file_info([f"{self.root}/{path}" for path in paths])

    def open_input_file(self, path):
        self.meeting.wait()
        return super().open_input_file(f"{self.root}/{path}")


@pytest.fixture
def bucket(tmp_path):
    """s3://bucket/out holding FILES small Parquet files, served by MeetingHandler; their paths under OUT."""
    paths = [f"rounds/run_id=r/part-{n}.parquet" for n in range(FILES)]
    for n, path in enumerate(paths):
        (tmp_path / "bucket" / "out" / path).parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table({"shoe_id": [n]}), tmp_path / "bucket" / "out" / path)
    store = Store.parse("s3://bucket/out")
    store.__dict__["filesystem"] = pafs.PyFileSystem(MeetingHandler(tmp_path))  # the cached property's value
    return store, paths


def test_the_sizes_of_files_in_a_bucket_are_asked_side_by_side(bucket):
    store, paths = bucket
    sizes = store.file_sizes(paths)
    assert all(size and size > 0 for size in sizes) and len(sizes) == FILES


def test_the_footers_of_files_in_a_bucket_are_read_side_by_side(bucket):
    store, paths = bucket
    footers = store.parquet_footers(paths)
    assert [footer.num_rows for footer in footers] == [1] * FILES
    assert [footer.schema.to_arrow_schema().names for footer in footers] == [["shoe_id"]] * FILES


def test_a_footer_that_cannot_be_read_is_why_in_one_line(tmp_path):
    (tmp_path / "t" / "run_id=r").mkdir(parents=True)
    (tmp_path / "t" / "run_id=r" / "bad.parquet").write_bytes(b"not parquet at all")
    store = Store.parse(str(tmp_path))
    why, missing = store.parquet_footers(["t/run_id=r/bad.parquet", "t/run_id=r/gone.parquet"])
    assert isinstance(why, str) and "\n" not in why and why
    assert isinstance(missing, str) and "\n" not in missing and missing
