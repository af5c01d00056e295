"""The tables under OUT, as the contracts (schemas/*.yaml) declare them: their names, and the column
whose value names a run's folder in each, so that a data file is `<table>/run_id=<run>/<name>`; the
checks of OUT before any work."""

import os
import tempfile
import uuid
from functools import cache
from pathlib import Path

import pyarrow.fs as pafs

from pipeline.atomic import TEMPORARY_PREFIX
from pipeline.errors import WORLD_ERRNOS, BaccaratError
from pipeline.schemas import shipped_contracts


_AZURE_PROBE = "baccarat-credentials-probe"  # a name no table uses


@cache
def partition_column() -> str:
    """The column every table is partitioned by, as the contracts declare it: the store keeps one."""
    declared = {c.partition_by for c in shipped_contracts()}
    if len(declared) != 1:
        raise ValueError(f"the contracts declare the partition columns {sorted(declared)}; the store keeps one")
    return declared.pop()


def run_folder(table: str, run_id: str) -> str:
    """The path under OUT of the folder of run `run_id`'s files in `table`."""
    return f"{table}/{partition_column()}={run_id}"


def data_file(table: str, run_id: str, name: str) -> str:
    """The path under OUT of a data file of run `run_id` in `table`."""
    return f"{run_folder(table, run_id)}/{name}"


@cache
def _table_layout() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The contracts' tables at OUT's top, and the folders (marts) whose every sub-folder is a table."""
    tables = {c.table for c in shipped_contracts()}
    return tuple(sorted(t for t in tables if "/" not in t)), tuple(sorted({t.rpartition("/")[0] for t in tables
                                                                         if "/" in t}))


def check_data_folder(folder: Path) -> None:
    """A local OUT that is a file, or a Delta table's own folder, refused in one line by every command: a
    reader of OUT's warehouse would otherwise say there is none, and to build it with `baccarat marts`."""
    if folder.is_file():
        raise BaccaratError(f"output path {folder} is a file, not a folder")
    if (folder / "_delta_log").is_dir():
        raise BaccaratError(f"{folder} is a Delta table, not a data folder: give the folder that holds its "
                            f"tables, --out {folder.parent}")
    top, folders = _table_layout()
    for name in (*top, *folders):
        # every command listed or read it as a folder and ended in status 1 ('Cannot list directory ...: Not a
        # directory'), simulate too, which writes no mart
        if (folder / name).is_file():
            raise BaccaratError(f"{folder / name} is a file where the folder of the {name!r} tables belongs: "
                                "move it away")


class Layout:
    """The tables under a Location (a mixin of Store)."""

    def table_names(self) -> list[str]:
        """The contracts' tables, and every folder of marts/: where tables are, or may be."""
        top, folders = _table_layout()
        names = list(top)
        for folder in folders:
            with self._errors("is not readable"):
                found = self.filesystem.get_file_info(pafs.FileSelector(self.fs_path(folder), allow_not_found=True))
            names += sorted(f"{folder}/{info.base_name}" for info in found if info.type == pafs.FileType.Directory)
        return names

    def written_files(self, table: str) -> dict[str, list[dict]]:
        """The data files in a table's run folders, committed or not (temporaries aside), by run id:
        each with its path under OUT and size, sorted by name."""
        with self._errors(f"table {table!r} is not readable"):
            found = self.filesystem.get_file_info(pafs.FileSelector(self.fs_path(table), recursive=True,
                                                                    allow_not_found=True))
        prefix, run_folder = self.fs_path(table) + "/", f"{partition_column()}="
        files: dict[str, list[dict]] = {}
        for info in sorted(found, key=lambda i: i.path):
            folder, _, name = info.path.removeprefix(prefix).partition("/")
            if (info.type == pafs.FileType.File and folder.startswith(run_folder) and name.endswith(".parquet")
                    and "/" not in name and not name.startswith(TEMPORARY_PREFIX)):
                files.setdefault(folder.removeprefix(run_folder), []).append(
                    {"path": f"{table}/{folder}/{name}", "size": info.size})
        return files

    def check_writable(self):
        """Create OUT if needed and write and remove a probe, or a one-line error: a local folder that
        cannot be made or written is bad input (another path is the remedy), a store that refuses, or a
        disk that fails or is full, a failure of the world."""
        probe = self.fs_path(f"_write-probe-{os.getpid()}-{uuid.uuid4().hex[:8]}")
        with self._errors("is not writable"):
            if self.is_local:
                _check_local_folder(Path(self.uri))
            else:
                self._check_bucket()
            with self.filesystem.open_output_stream(probe) as stream:
                stream.write(b"probe")
            self.filesystem.delete_file(probe)
        self.check_layout()
        return self

    def check_readable(self):
        with self._errors("is not readable"):
            if not self.is_local:
                self._check_bucket()
            info = self.filesystem.get_file_info(self.fs_path())
        if self.is_local and info.type == pafs.FileType.File:
            check_data_folder(Path(self.uri))
        if self.is_local and info.type != pafs.FileType.Directory:
            _check_links(Path(self.uri))
            raise BaccaratError(f"no output folder {self.uri}")
        self.check_layout()
        return self

    def _check_bucket(self) -> None:
        bucket = self.fs_path().split("/", 1)[0]
        if self.scheme in ("az", "abfss"):  # pyarrow 26 aborts the process (exit 134) when credentials fail
            self.first_answer(f"{bucket}/{_AZURE_PROBE}")  # on a container; below one they raise
        if self.first_answer(bucket).type == pafs.FileType.NotFound:
            raise BaccaratError(f"{self.uri}: bucket {bucket!r} does not exist")

    def check_layout(self) -> None:
        """A table's own folder given for the data folder is refused, and so is the layout before Delta
        Lake (manifests/), not mixed with the new one; so is a table's log holding what is not a file (see
        _check_log), before any work."""
        if not self.is_local:
            return
        check_data_folder(Path(self.uri))
        if Path(self.uri, "manifests").is_dir():
            raise BaccaratError(
                f"{self.uri} holds runs in the old layout (manifests/ and plain Parquet folders), which this "
                "version does not read: simulate again into a new folder")
        for table in self.table_names():
            self._check_log(table)


def _check_links(folder: Path) -> None:
    """A symbolic link on the way to OUT that leads nowhere (a loop, or a target that is not there) is named:
    mkdir calls it 'File exists' and a reader sees no folder."""
    if link := next((part for part in (folder, *folder.parents) if part.is_symlink() and not part.exists()), None):
        where = "" if link == folder else f": {link}"
        raise BaccaratError(f"output path {folder}{where} is a symbolic link that leads nowhere (a loop, or a "
                            f"target that does not exist)")


def _check_local_folder(folder: Path) -> None:
    """Make the local folder OUT, or a one-line error."""
    _check_links(folder)
    if folder.exists() and not folder.is_dir():
        raise BaccaratError(f"output path {folder} is a file, not a folder")
    if file := next((parent for parent in folder.parents if parent.is_file()), None):
        raise BaccaratError(f"output path {folder} is inside {file}, a file, not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:
        if error.errno in WORLD_ERRNOS:
            raise  # the world's, worded by Store._errors
        raise BaccaratError(f"output path {folder} is not writable: {error.strerror or error}") from None
