"""A task's data files: written under a temporary name (or in memory for an object store), hashed
while written, and under their name only once complete; the temporaries dead attempts left."""

import contextlib
import errno
import hashlib
import io
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa

from pipeline.at_once import each_at_once
from pipeline.atomic import TEMPORARY_PREFIX, untouched_for
from pipeline.cores import usable_cores
from pipeline.storage.errors import StorageError, first_line
from pipeline.storage.layout import data_file, partition_column, run_folder

STALE_SECONDS = 600  # a temporary file no writer has touched for this long is a dead attempt's
STALE_AGE = f"{STALE_SECONDS // 60} minutes"  # STALE_SECONDS as a user reads it


def written_by(temporary: str) -> str:
    """The tag of the job whose task writes the temporary file named `temporary` (create_file's name)."""
    return temporary.rsplit(".", 3)[1] if temporary.count(".") >= 4 else ""


class HashingStream(io.RawIOBase):
    """An output stream whose SHA-256 and size are known when it is closed, without reading it back;
    `path`: the file's path under OUT."""

    def __init__(self, sink, path: str):
        super().__init__()
        self._sink = sink
        self.path = path
        self.digest = hashlib.sha256()
        self.size = 0

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self.digest.update(data)
        self.size += len(data)
        self._sink.write(data)
        return len(data)

    def close(self) -> None:
        if not self.closed and not isinstance(self._sink, io.BytesIO):
            self._sink.close()
        super().close()

    def contents(self) -> bytes:
        """What was written, when the sink is memory."""
        return self._sink.getvalue()


class DataFiles:
    """The data files under a Location (a mixin of Store)."""

    @contextlib.contextmanager
    def create_file(self, table: str, run_id: str, name: str, job: str = "") -> Iterator[HashingStream]:
        """A new data file `<table>/run_id=<run>/<name>`, hashed while it is written, that appears under
        its name only once complete; the stream's `path` is the file's path under OUT. On a local disk
        it is written under a temporary name that carries `job` (the writing job's tag) and renamed; for
        an object store it is kept in memory and uploaded whole when complete, so a failed attempt
        publishes nothing (closing an object-store stream would publish what was written so far).
        Nothing reads it before a commit adds it."""
        relative = data_file(table, run_id, name)
        target = self.fs_path(relative)
        folder, _, base = target.rpartition("/")
        if not self.is_local:
            stream = HashingStream(io.BytesIO(), relative)
            yield stream
            with self.filesystem.open_output_stream(target) as upload:
                upload.write(stream.contents())
            return
        written = f"{folder}/{TEMPORARY_PREFIX}{base}.{job}.{uuid.uuid4().hex}.tmp"
        self.filesystem.create_dir(folder, recursive=True)
        stream = HashingStream(self.filesystem.open_output_stream(written), relative)
        try:
            yield stream
            stream.close()
            self.filesystem.move(written, target)
        finally:
            with contextlib.suppress(Exception):
                stream.close()
            with contextlib.suppress(OSError):
                self.filesystem.delete_file(written)

    def remove_temporaries(self, table: str, run_id: str, job: str,
                           stale_seconds: float | None = STALE_SECONDS) -> None:
        """Remove the local temporary files in the run's folder that attempts of job `job` left (a killed
        executor cannot clean up after itself), and any other untouched for `stale_seconds` (None: only
        the job's); another job's file being written is left alone."""
        folder = Path(self.fs_path(run_folder(table, run_id)))
        for leftover in folder.glob(f"{TEMPORARY_PREFIX}*.tmp") if self.is_local and folder.is_dir() else ():
            with contextlib.suppress(FileNotFoundError):
                if written_by(leftover.name) == job or (stale_seconds is not None
                                                        and untouched_for(leftover, stale_seconds)):
                    leftover.unlink()

    def temporaries(self) -> dict[Path, int]:
        """The temporary data files in the run folders of OUT's tables on a local disk, with their sizes:
        a running job's, or those a killed one left (an object store's are kept in memory). No table
        reads them."""
        found = {}
        for table in self.table_names() if self.is_local else ():
            for leftover in Path(self.fs_path(table)).glob(f"{partition_column()}=*/{TEMPORARY_PREFIX}*.tmp"):
                with contextlib.suppress(FileNotFoundError):  # renamed by its writer meanwhile
                    found[leftover] = leftover.stat().st_size
        return dict(sorted(found.items()))

    def remove_dead_temporaries(self, dry_run: bool) -> list[Path]:
        """Remove the temporary data files no writer has touched for STALE_SECONDS (a killed job's, which
        only a later write of the same run would remove); returns them (those that would go, if `dry_run`)."""
        dead = [leftover for leftover in self.temporaries() if untouched_for(leftover, STALE_SECONDS)]
        for leftover in dead if not dry_run else ():
            leftover.unlink(missing_ok=True)
        return dead

    def check_written(self, files: list[dict]) -> None:
        """Every file (path under OUT, size) is in the store with the size its writer recorded; else a
        one-line StorageError naming the first that is not."""
        for entry, size in zip(files, self.file_sizes([f["path"] for f in files])):
            if size != entry["size"]:
                found = "is missing" if size is None else f"holds {size:,} bytes"
                raise StorageError(f"{self.location(entry['path'])} {found}, its task wrote {entry['size']:,}; "
                                   "run the command again to write it again")

    def sha256(self, relative: str) -> str | None:
        """The SHA-256 of the file at `relative` under OUT, or None when it does not exist."""
        digest = hashlib.sha256()
        try:
            with self.filesystem.open_input_stream(self.fs_path(relative)) as stream:
                while block := stream.read(1 << 22):
                    digest.update(block)
        except FileNotFoundError:
            return None
        except (OSError, pa.ArrowException) as error:
            raise StorageError(f"cannot read {self.location(relative)}: {first_line(error)}") from None
        return digest.hexdigest()

    def sha256s(self, paths: list[str]) -> dict[str, str | None]:
        """The SHA-256 of each file at `paths` (see sha256), hashed side by side: hashing releases the GIL."""
        return dict(zip(paths, each_at_once(self.sha256, paths, usable_cores())))

    @contextlib.contextmanager
    def local_copies(self, reader_paths: list[str]) -> Iterator[dict[str, tuple[str, str]]]:
        """Copies of OUT's files at `reader_paths` (as reader_path gives them) in a new local folder laid
        out as OUT, each fetched whole with one request and hashed while copied, so that a reader gets
        its bytes once: {reader path: (the copy's local path, its SHA-256)}. The folder is removed
        afterwards. An object that cannot be read is an OSError naming it (FileNotFoundError, its filename
        the reader path, for one that is not there)."""
        with tempfile.TemporaryDirectory(prefix="baccarat-copies-") as folder:
            copies = type(self).parse(folder)

            def copy(reader_path: str) -> tuple[str, str]:
                relative = reader_path.removeprefix(self.location() + "/")
                target = Path(copies.fs_path(relative))
                target.parent.mkdir(parents=True, exist_ok=True)
                digest = hashlib.sha256()
                try:
                    with self.filesystem.open_input_stream(self.filesystem_path(reader_path)) as source, \
                            target.open("wb") as sink:
                        while block := source.read(1 << 22):
                            digest.update(block)
                            sink.write(block)
                except FileNotFoundError:
                    raise FileNotFoundError(errno.ENOENT, "no such object", reader_path) from None
                except (OSError, pa.ArrowException) as error:
                    raise OSError(f"cannot read {reader_path}: {first_line(error)}") from None
                return copies.reader_path(relative), digest.hexdigest()

            yield dict(zip(reader_paths, each_at_once(copy, reader_paths, 8)))  # reading releases the GIL

