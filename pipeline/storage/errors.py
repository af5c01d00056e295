"""The store's errors: failures of the world (exit status 1), and the first line of what a library said."""

from pipeline.errors import WorldFailure


class StorageError(WorldFailure):
    """The store refused or failed an operation (missing bucket, refused credentials, I/O)."""


class DamagedLog(StorageError):
    """A table's log that deltalake cannot read past an entry (missing, or not a commit)."""

    def __init__(self, table: str, entry: str, what: str):
        super().__init__(f"the log of table {table!r} is damaged: {entry}: {what}")
        self.table = table
        self.entry = entry


class CommitConflict(StorageError):
    """A Delta commit lost to concurrent commits more times than it retries."""


def first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__
