"""Runs on disk: run ids, manifests (the commit), committed-run discovery and checksums.

A run exists for readers only once DIR/manifests/<run_id>.json is in place; it is
written last, under a temporary name, then renamed.
"""

import hashlib
import io
import json
import os
import re
import shutil
from pathlib import Path

from pipeline.errors import BaccaratError
from pipeline.schemas import contract

_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
TEMPORARY_PREFIX = "."


def check_run_id(run_id: str) -> str:
    if not _RUN_ID.match(run_id) or ".." in run_id:
        shown = run_id if len(run_id) <= 40 else run_id[:40] + "..."
        raise BaccaratError(
            f"run id {shown!r} is not allowed: use 1 to 128 letters, digits, '_', '-' or '.', "
            "starting with a letter or digit, without '..'"
        )
    return run_id


def manifest_path(out: Path, run_id: str) -> Path:
    return out / "manifests" / f"{run_id}.json"


def data_dir(out: Path, table: str, run_id: str) -> Path:
    return out / contract(table).path.format(run_id=run_id)


def read_manifest(out: Path, run_id: str) -> dict | None:
    path = manifest_path(out, run_id)
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise BaccaratError(f"manifest {path} is unreadable: {error}") from None


def write_atomically(path: Path, text: str) -> None:
    """Write a file under a temporary name in the same folder, flush it to disk, then rename it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f"{TEMPORARY_PREFIX}{path.name}.tmp-{os.getpid()}")
    with open(temporary, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def commit(out: Path, manifest: dict) -> Path:
    path = manifest_path(out, manifest["run_id"])
    write_atomically(path, json.dumps(manifest, indent=2, sort_keys=False) + "\n")
    return path


def uncommit(out: Path, run_id: str) -> None:
    """Make a run invisible (manifest first), then remove its data."""
    manifest_path(out, run_id).unlink(missing_ok=True)
    remove_data(out, run_id)


def remove_data(out: Path, run_id: str) -> None:
    for table in ("rounds", "shoes"):
        shutil.rmtree(data_dir(out, table, run_id), ignore_errors=True)


def remove_temporaries(out: Path, run_id: str) -> None:
    """Remove the temporary files of attempts that died (a killed executor cannot clean up after itself)."""
    for table in ("rounds", "shoes"):
        folder = data_dir(out, table, run_id)
        for leftover in folder.glob(f"{TEMPORARY_PREFIX}*") if folder.is_dir() else ():
            leftover.unlink(missing_ok=True)


def committed_runs(out: Path) -> list[str]:
    """Run ids with a manifest under `out`, sorted; runs without one do not exist."""
    folder = out / "manifests"
    if not folder.is_dir():
        return []
    return sorted(p.stem for p in folder.glob("*.json") if not p.name.startswith(TEMPORARY_PREFIX))


class HashingFile(io.RawIOBase):
    """A file being written whose SHA-256 is known when it is closed, without reading it back."""

    def __init__(self, path: Path):
        super().__init__()
        self._file = open(path, "wb")
        self.digest = hashlib.sha256()

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self.digest.update(data)
        return self._file.write(data)

    def close(self) -> None:
        if not self.closed:
            self._file.close()
        super().close()


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify_files(out: Path, manifest: dict) -> None:
    """Every data file the manifest lists exists with its checksum, or a one-line error naming it."""
    for entry in manifest["files"]:
        path = out / entry["path"]
        if not path.is_file():
            raise BaccaratError(f"run {manifest['run_id']!r}: data file missing: {path}")
        if sha256(path) != entry["sha256"]:
            raise BaccaratError(f"run {manifest['run_id']!r}: data file fails its checksum: {path}")
