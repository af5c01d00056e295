"""Writing a local file whole or not at all: under a temporary name beside it, flushed to disk, then
renamed over it. A reader sees the old file or the new one, never part of one; a failed write leaves
neither a temporary file behind nor an error of the clean-up in place of the write's own."""

import contextlib
import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

TEMPORARY_PREFIX = "."  # temporary names are hidden files, which no reader of a folder's data lists


def temporary_name(path: Path, tag: str = "") -> Path:
    """A fresh hidden name beside `path`, ending in .tmp (and carrying `tag`, if given)."""
    return path.with_name(f"{TEMPORARY_PREFIX}{path.name}.{tag + '.' if tag else ''}{uuid.uuid4().hex}.tmp")


@contextlib.contextmanager
def replacing(path: Path, sidecars: tuple[str, ...] = ()) -> Iterator[Path]:
    """A temporary path beside `path` for the block to write; once the block ends, the file is flushed to
    disk and renamed over `path`. On any error the temporary file goes, with the files named after it
    plus each suffix in `sidecars` (a database's journal), and the error raised is the block's."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = temporary_name(path)
    try:
        yield temporary
        with open(temporary, "rb+") as written:
            os.fsync(written.fileno())
        os.replace(temporary, path)
    finally:
        for leftover in (temporary, *(temporary.with_name(temporary.name + suffix) for suffix in sidecars)):
            with contextlib.suppress(OSError):
                leftover.unlink(missing_ok=True)


def write_text(path: Path, text: str) -> None:
    """Replace `path` with `text` (UTF-8), whole or not at all."""
    with replacing(path) as temporary:
        temporary.write_text(text, encoding="utf-8")


def untouched_for(path: Path, seconds: float) -> bool:
    """Whether nothing has written `path` for `seconds` (False once it is gone)."""
    try:
        return path.stat().st_mtime < time.time() - seconds
    except OSError:
        return False
