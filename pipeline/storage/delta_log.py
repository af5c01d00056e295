"""A Delta table's log: its entries, the first one a reader cannot get past, and setting the damaged
part aside so that the table reads as its last whole version (docs/repair.md)."""

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
        """The first entry of a table's log that a reader cannot get past, and what is wrong with it: a
        commit missing between the newest checkpoint and the newest commit, or one that is not JSON
        lines; None when every entry a reader needs is whole."""
        entries = self._log_entries(table)
        commits = sorted(version for name, version in entries.items() if name.endswith(".json"))
        if not commits:
            return None
        checkpoints = [v for name, v in entries.items() if name.endswith(".parquet") and v <= commits[-1]]
        for version in range(max(checkpoints, default=-1) + 1, commits[-1] + 1):
            name = f"{version:020d}.json"
            where = self.location(table, DELTA_LOG, name)
            if name not in entries:
                return where, f"commit {version} of {commits[-1]} is missing"
            if problem := self._commit_problem(table, name):
                return where, f"commit {version} {problem}"
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
        """Move the entries of a table's log from its first damaged entry on into a sibling folder,
        `<table>/_delta_log.damaged-<time>`, so that the table reads as its last whole version (none when
        version 0 is the damaged one); returns that folder, or None when the log is whole. Files the
        moved commits added stay where they are: the runs' recorded, verified files are committed
        again by pipeline.repair."""
        damaged = self.damaged_log_entry(table)
        if damaged is None:
            return None
        self._keep(table, None)
        first = int(damaged[0].rsplit("/", 1)[1][:20])
        aside = f"{DELTA_LOG}.damaged-{int(time.time() * 1000)}"
        moved = [name for name, version in self._log_entries(table).items() if version >= first]
        with self._errors(f"cannot set the damaged log of table {table!r} aside"):
            if self.file_sizes([f"{table}/{DELTA_LOG}/{LAST_CHECKPOINT}"])[0] is not None:
                moved.append(LAST_CHECKPOINT)  # it may name a checkpoint set aside
            self.filesystem.create_dir(self.fs_path(table, aside))
            for name in sorted(moved, reverse=True):  # the newest first: the log has no gap meanwhile
                self.filesystem.move(self.fs_path(table, DELTA_LOG, name), self.fs_path(table, aside, name))
        return self.location(table, aside)
