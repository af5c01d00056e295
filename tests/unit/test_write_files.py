"""tasks.write_files, the task's side of the job skeleton, without Spark: what reaches the store is what
was hashed, and a file whose end cannot be written fails the task."""

import contextlib
import errno
import hashlib
import io

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.tasks import write_files

BATCHES = [pa.table({"shoe": pa.array(range(first, first + 500), pa.int64())}) for first in (0, 500)]


def parquet_bytes(tables: list[pa.Table]) -> bytes:
    sink = io.BytesIO()
    with pq.ParquetWriter(sink, tables[0].schema) as writer:
        for table in tables:
            writer.write_table(table)
    return sink.getvalue()


class DiskWithRoom(io.RawIOBase):
    """A file on a disk with `room` bytes left, hashed as the store's streams are: a write past the room
    fails as a full disk does."""

    def __init__(self, room: int):
        super().__init__()
        self.room, self.held = room, bytearray()
        self.path, self.digest = "shoes/run_id=r/part.parquet", hashlib.sha256()

    @property
    def size(self) -> int:
        return len(self.held)

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        if len(self.held) + len(data) > self.room:
            raise OSError(errno.ENOSPC, "No space left on device")
        self.held += data
        self.digest.update(data)
        return len(data)


class StoreWithRoom:
    def __init__(self, room: int):
        self.room, self.files = room, []

    @contextlib.contextmanager
    def create_file(self, table: str, run_id: str, name: str, job: str):
        self.files.append(DiskWithRoom(self.room))
        yield self.files[-1]


def write(out: StoreWithRoom) -> list[dict]:
    batches = ((500 * (i + 1), (table,)) for i, table in enumerate(BATCHES))
    return write_files(out, "r", "part.parquet", "job", ("shoes",), batches, lambda shoes, rows: None)


def test_the_file_holds_what_was_hashed_and_counted():
    out = StoreWithRoom(room=10**9)
    [entry] = write(out)
    expected = parquet_bytes(BATCHES)
    assert bytes(out.files[0].held) == expected
    assert entry == {"table": "shoes", "path": "shoes/run_id=r/part.parquet", "rows": 1000, "size": len(expected),
                     "sha256": hashlib.sha256(expected).hexdigest()}


def test_a_footer_that_cannot_be_written_fails_the_task():
    """The footer is written when the writer closes: a full disk then was swallowed, and the task
    reported a file without its end."""
    out = StoreWithRoom(room=len(parquet_bytes(BATCHES)) - 1)
    with pytest.raises(OSError) as failure:
        write(out)
    assert failure.value.errno == errno.ENOSPC
