"""Object-store files for DuckDB's own Parquet reader, read through pyarrow's filesystem.

DuckDB reads a file of a Python filesystem from several threads through one file object, each read
being a seek and then a read. pyarrow lets go of the GIL while it reads, so with the one position a
file object has, a thread could read from where another thread had just sought: DuckDB then fails on
the bytes it got (`invalid TType`, `don't know what type`, a short read). Here every thread keeps its
own position and every read names its offset (pyarrow's read_at, which object-store files serve
concurrently).
"""

import io
import threading

import pyarrow as pa
import pyarrow.fs as pafs
from fsspec.implementations.arrow import ArrowFSWrapper


class PositionalFile(io.RawIOBase):
    """A read-only file whose position belongs to the thread that sought it."""

    def __init__(self, file: pa.NativeFile):
        super().__init__()
        self._file = file
        self._size = file.size()
        self._position = threading.local()

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return getattr(self._position, "offset", 0)

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        start = {io.SEEK_SET: 0, io.SEEK_CUR: self.tell(), io.SEEK_END: self._size}[whence]
        self._position.offset = start + offset
        return self._position.offset

    def read(self, size: int = -1) -> bytes:
        start = self.tell()
        wanted = self._size - start if size is None or size < 0 else min(size, self._size - start)
        data = self._file.read_at(max(wanted, 0), start) if wanted > 0 else b""
        self._position.offset = start + len(data)
        return data

    def readinto(self, buffer) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)

    def close(self) -> None:
        if not self.closed:
            self._file.close()
        super().close()


def duckdb_filesystem(scheme: str, filesystem: pafs.FileSystem) -> ArrowFSWrapper:
    """`filesystem` as an fsspec filesystem of `scheme://` URIs, to register into a DuckDB connection;
    its files open for reading only, as PositionalFile."""

    class ObjectFiles(ArrowFSWrapper):
        protocol = scheme

        def _open(self, path, mode="rb", block_size=None, seekable=True, **kwargs):
            if mode != "rb":
                raise PermissionError(f"{scheme}://{path} opens for reading only here")
            return PositionalFile(self.fs.open_input_file(path))

    return ObjectFiles(filesystem)
