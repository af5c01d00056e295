"""A Delta table's log: its entries, the first one a reader cannot get past, and setting the damaged
part aside so that the table reads as its last whole version (docs/repair.md)."""

import contextlib
import json
import os
import re
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs

from pipeline.errors import BaccaratError
from pipeline.storage.errors import StorageError, first_line

DELTA_LOG = "_delta_log"
LAST_CHECKPOINT = "_last_checkpoint"
_LOG_ENTRY = re.compile(r"\d{20}\.(json|checkpoint(\.\d+\.\d+)?\.parquet)")


class DeltaLog:
    """The logs of the tables under a Location (a mixin of Store)."""

    def _check_log(self, table: str) -> None:
        """A local table's log holds regular files (and folders) only: deltalake would wait forever
        reading a FIFO there."""
        log = Path(self.uri, table, DELTA_LOG)
        try:
            entries = list(os.scandir(log)) if self.is_local else []
        except FileNotFoundError:
            return
        except OSError as error:
            raise StorageError(f"the log of table {table!r}, {log}, is not readable: "
                               f"{error.strerror or error}") from None
        for entry in entries:
            if not (entry.is_file() or entry.is_dir()):
                raise BaccaratError(f"{entry.path} is not a regular file (a FIFO, a socket, a device or a broken "
                                   f"link): the log of table {table!r} may hold only files; move it away")

    def _log_entries(self, table: str) -> dict[str, int]:
        """The commits and checkpoints in a table's log, by file name, with their versions."""
        with self._errors(f"the log of table {table!r} is not readable"):
            infos = self.filesystem.get_file_info(
                pafs.FileSelector(self.fs_path(table, DELTA_LOG), allow_not_found=True))
        return {info.base_name: int(info.base_name[:20]) for info in infos
                if info.type == pafs.FileType.File and _LOG_ENTRY.fullmatch(info.base_name)}

    def damaged_log_entry(self, table: str) -> tuple[str, str] | None:
        """The first entry of a table's log that a reader cannot get past, and what is wrong with it: the
        newest checkpoint when it is not Parquet, else a commit missing between it and the newest commit,
        or one that is not JSON lines, else a checkpoint hint naming a checkpoint not there; None when every
        entry a reader needs is whole."""
        entries = self._log_entries(table)
        commits = sorted(version for name, version in entries.items() if name.endswith(".json"))
        if not commits:
            return None
        checkpoints = [v for name, v in entries.items() if name.endswith(".parquet") and v <= commits[-1]]
        if checkpoints and (damaged := self._damaged_checkpoint(table, max(checkpoints), entries)):
            return damaged
        for version in range(max(checkpoints, default=-1) + 1, commits[-1] + 1):
            name = f"{version:020d}.json"
            where = self.location(table, DELTA_LOG, name)
            if name not in entries:
                return where, f"commit {version} of {commits[-1]} is missing"
            if problem := self._commit_problem(table, name):
                return where, f"commit {version} {problem}"
        return self._hint_without_checkpoint(table, entries)

    def _hint_without_checkpoint(self, table: str, entries: dict[str, int]) -> tuple[str, str] | None:
        """The checkpoint hint when it names a version that no checkpoint of the log is at or after (its
        checkpoint deleted, or a copy that left it out): deltalake then reads no version at all."""
        try:
            with self.filesystem.open_input_stream(self.fs_path(table, DELTA_LOG, LAST_CHECKPOINT)) as stream:
                hinted = json.loads(stream.read())["version"]
        except (OSError, pa.ArrowException, ValueError, TypeError, KeyError):
            return None  # no hint, or one deltalake passes by
        checkpoints = [at for name, at in entries.items() if name.endswith(".parquet")]
        if not isinstance(hinted, int) or any(at >= hinted for at in checkpoints):
            return None
        return (self.location(table, DELTA_LOG, LAST_CHECKPOINT),
                f"the checkpoint hint names checkpoint {hinted}, which is not there")

    def _damaged_checkpoint(self, table: str, version: int, entries: dict[str, int]) -> tuple[str, str] | None:
        """The first file of checkpoint `version` of the log that is not Parquet, and why."""
        parts = sorted(name for name, at in entries.items() if at == version and name.endswith(".parquet"))
        for name, footer in zip(parts, self.parquet_footers([f"{table}/{DELTA_LOG}/{name}" for name in parts])):
            if isinstance(footer, str):
                return self.location(table, DELTA_LOG, name), f"checkpoint {version} is not a readable Parquet file ({footer})"
        return None

    def _commit_problem(self, table: str, name: str) -> str | None:
        """What keeps a reader from a commit of the log, None when it is JSON lines of actions; one with no
        action at all is a file left empty (every writer records at least its commitInfo)."""
        try:
            with self.filesystem.open_input_stream(self.fs_path(table, DELTA_LOG, name)) as stream:
                lines = [line for line in stream.read().decode().splitlines() if line.strip()]
            if not all(isinstance(json.loads(line), dict) for line in lines):
                raise ValueError("not an action")
        except (UnicodeDecodeError, ValueError):
            return "is not a Delta commit (JSON lines)"
        except (OSError, pa.ArrowException) as error:
            return f"is not readable ({first_line(error)})"
        return None if lines else "is empty (no actions)"

    def set_log_aside(self, table: str) -> str | None:
        """Move the damaged entries of a table's log into a sibling folder, `<table>/_delta_log.damaged-<time>`,
        until the log is whole: a damaged checkpoint alone (its commits are kept: see TABLE_CONFIGURATION),
        else every entry from the first damaged commit on, so that the table reads as its last whole
        version (none when version 0 is the damaged one). Returns that folder, or None when the log is
        whole. Files the moved commits added stay where they are: the runs' recorded, verified files are
        committed again by pipeline.repair."""
        aside, moved_any = f"{DELTA_LOG}.damaged-{int(time.time() * 1000)}", False
        while (damaged := self.damaged_log_entry(table)) is not None:
            self._keep(table, None)
            self._move_aside(table, self._damaged_part(table, damaged[0].rsplit("/", 1)[1]), aside)
            moved_any = True
        return self.location(table, aside) if moved_any else None

    def _damaged_part(self, table: str, damaged: str) -> list[str]:
        """The entries to set aside for the damaged entry named `damaged`: a checkpoint's files, or every
        entry from a commit on."""
        if damaged == LAST_CHECKPOINT:
            return []  # the hint alone: _move_aside takes it
        version, entries = int(damaged[:20]), self._log_entries(table)
        if damaged.endswith(".parquet"):
            return [name for name, at in entries.items() if at == version and name.endswith(".parquet")]
        return [name for name, at in entries.items() if at >= version]

    def _move_aside(self, table: str, names: list[str], aside: str) -> None:
        """Move the log entries `names` (and the checkpoint hint, which may name one of them) to `aside`."""
        with self._errors(f"cannot set the damaged log of table {table!r} aside"):
            if self.file_sizes([f"{table}/{DELTA_LOG}/{LAST_CHECKPOINT}"])[0] is not None:
                names = [*names, LAST_CHECKPOINT]
            self.filesystem.create_dir(self.fs_path(table, aside))
            try:
                for name in sorted(names, reverse=True):  # the newest first: the log has no gap meanwhile
                    self.filesystem.move(self.fs_path(table, DELTA_LOG, name), self.fs_path(table, aside, name))
            except BaseException:
                self._remove_if_empty(table, aside)
                raise

    def _remove_if_empty(self, table: str, aside: str) -> None:
        """Remove the folder `aside` when nothing was moved into it (a log that cannot be written: `chattr +i`,
        a read-only mount), so no empty `_delta_log.damaged-*` is left; any error doing so gives way to the
        move's own."""
        with contextlib.suppress(OSError, pa.ArrowException):
            selector = pafs.FileSelector(self.fs_path(table, aside), allow_not_found=True)
            if not self.filesystem.get_file_info(selector):
                self.filesystem.delete_dir(self.fs_path(table, aside))
