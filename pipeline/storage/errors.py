"""The store's errors: failures of the world (exit status 1), and the first line of what a library said."""

import itertools
import re
import shlex

from pipeline.errors import WorldFailure

_COLOURS = re.compile(r"\x1b\[[0-9;]*m")


class StorageError(WorldFailure):
    """The store refused or failed an operation (missing bucket, refused credentials, I/O)."""

    @property
    def problem(self) -> str:
        """What is wrong, without what to run about it (verify adds its own repair)."""
        return str(self)


class DamagedLog(StorageError):
    """A table's log that deltalake cannot read past an entry (missing, or not a commit), in OUT `out`:
    the message names the command that gives its repair (`problem` is the message without it)."""

    def __init__(self, table: str, entry: str, what: str, out: str):
        self._problem = f"the log of table {table!r} is damaged: {entry}: {what}"
        super().__init__(f"{self._problem}; `baccarat verify --out {shlex.quote(out)}` names its repair")
        self.table = table
        self.entry = entry

    @property
    def problem(self) -> str:
        return self._problem


class CommitConflict(StorageError):
    """A Delta commit lost to concurrent commits more times than it retries."""


class PartitionTaken(StorageError):
    """A run's files that a commit may not replace, committed by another command while it ran."""


def first_line(error: BaseException) -> str:
    """What a library said, in one line: its first, and the causes delta-rs lists under it (lines that begin
    with '↳', in colour), which hold the file and the reason ('Generic LocalFileSystem error' names neither)."""
    lines = [line.strip() for line in _COLOURS.sub("", str(error)).strip().splitlines()]
    if not lines:
        return type(error).__name__
    causes = itertools.takewhile(lambda line: line.startswith("↳"), lines[1:])
    return ": ".join([lines[0], *(cause.removeprefix("↳").strip() for cause in causes)])
