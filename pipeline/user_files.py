"""Files a user names: read only if regular and only up to a size, written only where a file can be.

A FIFO would block the reader until something writes to it (Ctrl-C included: Python cannot interrupt
the blocking open), a device such as /dev/zero never ends, and a huge file fills the memory; each
is refused in one line instead. The file is never opened before it is known to be regular, and
what is opened is checked again, so a file swapped for a FIFO in between does not block either.
"""

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from pipeline.errors import BaccaratError

CONFIG_FILE_BYTES = 1 << 20  # a rule set, strategy, count system or policy: a few kilobytes
_NOT_REGULAR = "is not a regular file (a FIFO, a device or a socket)"


def read_bytes(path: Path | str, noun: str, limit: int, kind: str = "file") -> bytes:
    """The contents of the regular file at `path`, at most `limit` bytes; else a one-line error that
    names the file as `noun` (e.g. "rule set") and what it should be as `kind` (e.g. "YAML file")."""
    text = str(path)
    if not text:
        raise BaccaratError(f"{noun} file not found: (an empty path)")
    try:
        _check_regular(os.stat(text).st_mode, noun, text, kind)
        descriptor = os.open(text, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except FileNotFoundError:
        raise BaccaratError(f"{noun} file not found: {text}") from None
    except OSError as error:
        raise BaccaratError(f"cannot read {noun} {text}: {error.strerror or error}") from None
    with os.fdopen(descriptor, "rb") as file:
        _check_regular(os.fstat(file.fileno()).st_mode, noun, text, kind)
        try:
            contents = file.read(limit + 1)
        except OSError as error:
            raise BaccaratError(f"cannot read {noun} {text}: {error.strerror or error}") from None
    if len(contents) > limit:
        raise BaccaratError(f"{noun} {text!r} is larger than {_size(limit)}: not a {kind} this reads")
    return contents


def read_text(path: Path | str, noun: str, limit: int, kind: str = "file") -> str:
    """read_bytes, decoded as UTF-8 (a file in another encoding is a one-line error)."""
    try:
        return read_bytes(path, noun, limit, kind).decode("utf-8")
    except UnicodeDecodeError as error:
        raise BaccaratError(f"{noun} {str(path)!r} is not UTF-8 text (byte {error.start})") from None


def not_utf8(text: str) -> str | None:
    """What in `text` is not UTF-8 ('byte 0xff', as Python keeps such a byte of an argument or of stdin: a
    surrogate escape), which the libraries refuse in a traceback of their own (pyarrow, DuckDB); None for
    UTF-8 text."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        code = ord(text[error.start])
        return f"byte 0x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"U+{code:04X}"
    return None


def as_bytes_read(text: str) -> str:
    """`text` with each byte that is not UTF-8 shown as \\xNN."""
    return "".join(f"\\x{ord(char) - 0xDC00:02x}" if 0xDC80 <= ord(char) <= 0xDCFF else char for char in text)


_SPECIAL_FILES = ((stat.S_ISFIFO, "a FIFO (a named pipe)"), (stat.S_ISSOCK, "a socket"),
                  (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def special_file(path: Path | str) -> str | None:
    """What is at `path`, its links followed, when it is neither a regular file nor a folder ("a FIFO (a
    named pipe)", "a socket", a device); None otherwise, nothing there included. Nothing is opened."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    return next((name for is_kind, name in _SPECIAL_FILES if is_kind(mode)), None)


def _check_regular(mode: int, noun: str, text: str, kind: str) -> None:
    if stat.S_ISDIR(mode):
        raise BaccaratError(f"{noun} {text!r} is a folder, not a {kind}")
    if not stat.S_ISREG(mode):
        raise BaccaratError(f"{noun} {text!r} {_NOT_REGULAR}")


def _size(limit: int) -> str:
    return f"{limit >> 20} MiB" if limit >= 1 << 20 else f"{limit:,} bytes"


@dataclass(frozen=True)
class UserFile:
    """A file a user named, read as read_text reads it; it reads like a shipped resource (read_text)."""

    path: str
    noun: str
    limit: int = CONFIG_FILE_BYTES
    kind: str = "YAML file"

    def read_text(self, encoding: str = "utf-8") -> str:
        return read_text(self.path, self.noun, self.limit, self.kind)

    def __str__(self) -> str:
        return self.path


MARK_BYTES = 4096  # where a file a command wrote holds the mark it is known by


def output_file(path: Path | str, noun: str, mark: bytes) -> Path:
    """`path` if a file can go there: not `-` (which reads as stdout), not a folder, not a FIFO or a device
    (a rename would replace it), not under a file, and nothing there but an empty file or one the command
    wrote before (`mark` in its first MARK_BYTES: `--page /etc/passwd` replaced the file with the report);
    else a one-line error naming it as `noun` (e.g. "--page"). A folder it needs is created when the file
    is written; a folder that cannot be written fails then, in one line too."""
    text = str(path)
    target = Path(text)
    if text == "-":
        raise BaccaratError(f"{noun} '-': the command writes a file, not stdout: give the file's path (./- for a file "
                            "named -)")
    if not text or target.name in ("", ".", "..") or target.is_dir():
        raise BaccaratError(f"{noun} {text!r} is a folder: give the path of a file")
    if target.exists() and not target.is_file():
        raise BaccaratError(f"{noun} {text!r} {_NOT_REGULAR}")
    _check_not_a_broken_link(target, noun)
    _check_ancestors(target, noun)
    _check_not_data(target, noun)
    if target.is_file() and target.stat().st_size and mark not in _first_bytes(target, noun):
        raise BaccaratError(f"{noun} {text!r} is a file this command did not write: it is left as it is (give "
                            "another path, or remove the file first)")
    return target


def _first_bytes(path: Path, noun: str) -> bytes:
    try:
        with path.open("rb") as stream:
            return stream.read(MARK_BYTES)
    except OSError as error:
        raise BaccaratError(f"{noun} {str(path)!r} cannot be read: {error.strerror or error}") from None


DUCKDB_MAGIC = (8, b"DUCK")  # where every DuckDB database file holds its format's name
DELTA_LOG = "_delta_log"  # the folder that makes its parent a Delta table


def is_duckdb_file(path: Path) -> bool:
    offset, magic = DUCKDB_MAGIC
    if not path.is_file():  # a FIFO would block the open
        return False
    try:
        with path.open("rb") as stream:
            return stream.read(offset + len(magic))[offset:] == magic
    except OSError:
        return False


def check_outside_tables(target: Path, noun: str) -> None:
    """An output never goes into a Delta table, beside or over its data files or log, where a vacuum of the
    table removes what is not its own: a one-line error instead."""
    absolute = target.absolute()
    table = next((folder for folder in (absolute, *absolute.parents) if (folder / DELTA_LOG).is_dir()), None)
    if table is not None:
        raise BaccaratError(f"{noun} {str(target)!r} is within the Delta table {table}: give a path outside the tables")


def _check_not_data(target: Path, noun: str) -> None:
    """An output goes neither into a Delta table nor over a DuckDB database (the warehouse, or its published
    file): a one-line error instead of data replaced."""
    check_outside_tables(target, noun)
    if target.is_file() and is_duckdb_file(target):
        raise BaccaratError(f"{noun} {str(target)!r} is a DuckDB database (the warehouse itself?): give the path of "
                            "the file to write")


def output_folder(path: Path | str, noun: str) -> Path:
    """`path` if files can go in it: a folder, or a path where one can be made; else a one-line error."""
    text = str(path)
    if not text:
        raise BaccaratError(f"{noun}: give a folder (the path is empty)")
    folder = Path(text)
    if folder.exists() and not folder.is_dir():
        raise BaccaratError(f"{noun} {text!r} is not a folder: give the folder the files go to")
    _check_not_a_broken_link(folder, noun)
    _check_ancestors(folder, noun)
    _check_not_data(folder, noun)
    return folder


def _check_not_a_broken_link(path: Path, noun: str) -> None:
    if path.is_symlink() and not path.exists():
        raise BaccaratError(f"{noun} {str(path)!r} is a broken symbolic link (to {os.readlink(path)}): give "
                            "another path, or remove the link first")


def _check_ancestors(path: Path, noun: str) -> None:
    """The nearest folder above `path` that exists must be a folder (not a file)."""
    nearest = next((parent for parent in path.absolute().parents if parent.exists()), None)  # None: the root
    if nearest is not None and not nearest.is_dir():
        raise BaccaratError(f"{noun} {str(path)!r}: {nearest} is a file, not a folder")
