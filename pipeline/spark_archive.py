"""The class-data archive of the driver's JVM (Java's AppCDS): the classes a driver loads, parsed once and
mapped by every later driver of the same Java, Spark and options, which then starts about 2 s sooner
(docs/measurements.md). The JVM writes the archive as it exits, after this process would have ended, so
a command that makes one lets its JVM exit first and keeps the archive only once the JVM has exited
cleanly (keep_made_archive): a driver never maps a torn file. Java checks an archive against its own
build and the class path before it maps it, and starts without it when they differ."""

import contextlib
import hashlib
import json
import os
import shlex
import uuid
from dataclasses import dataclass
from pathlib import Path

from pipeline.atomic import untouched_for
from pipeline.home_folders import user_folder

KEPT_ARCHIVES = 2  # the newest; an upgrade of Java or pyspark makes another
MADE_SECONDS = 120  # how long a command waits at its end for its JVM to write the archive (6 s seen)
STALE_SECONDS = 600  # a partial archive this old is a killed command's
SILENT = "-Xlog:cds=off,cds+dynamic=off"  # writing one warns of every class it leaves out
# Beside where an archive would be: Java exited by itself and wrote none (status 1 with SPARK_CONF_DIR, a
# folder of files, on the class path), so later drivers neither map nor make one, and start as without
CANNOT = ".none"


def cache_folder() -> Path:
    """BACCARAT_CACHE_DIR, else the user's cache folder (XDG_CACHE_HOME, by default ~/.cache) under baccarat."""
    return user_folder("BACCARAT_CACHE_DIR", "XDG_CACHE_HOME", ".cache")


@dataclass(frozen=True)
class DriverArchive:
    """The archive of drivers launched with the same Java, pyspark and JVM options (`path`), and the
    partial file this driver writes as it exits when there is none yet (`making`)."""

    path: Path
    making: Path | None

    def java_options(self) -> str:
        if self.making is None:
            return f"{shlex.quote(f'-XX:SharedArchiveFile={self.path}')} {SILENT}"
        return f"{shlex.quote(f'-XX:ArchiveClassesAtExit={self.making}')} {SILENT}"


def driver_archive(java: Path, spark_home: Path, java_options: str, make: bool) -> DriverArchive | None:
    """The archive to map, if made; else, with `make`, one to make; None without, where Java could not
    make it, or where the cache folder cannot be written (the driver starts as it would without)."""
    key = _key(java, spark_home, java_options)
    folder = cache_folder() / "jvm"
    path = folder / f"driver-{key}.jsa"
    if path.is_file():
        return DriverArchive(path, None)
    if not make or path.with_suffix(CANNOT).exists():
        return None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        _remove_stale(folder)
        making = folder / f".driver-{key}-{uuid.uuid4().hex[:12]}.jsa.making"
        making.touch()  # the folder is writable; the JVM writes it whole as it exits
    except OSError:
        return None
    return DriverArchive(path, making)


def keep_made_archive(archive: DriverArchive, exit_status: int | None) -> None:
    """Keep the archive the driver's JVM wrote, once it exited with `exit_status` 0 (None: it has not
    exited), under its name in one rename; else remove the partial file, and where the JVM ended by itself
    (not by a signal) without writing one, mark the archive as one Java cannot make (CANNOT). It and the
    newest others, KEPT_ARCHIVES in all, stay."""
    if archive.making is None:
        return
    with contextlib.suppress(OSError):
        if exit_status == 0 and archive.making.stat().st_size > 0:
            os.replace(archive.making, archive.path)
            others = sorted((p for p in archive.path.parent.glob("driver-*.jsa") if p != archive.path), key=_modified)
            for old in others[:max(0, len(others) - KEPT_ARCHIVES + 1)]:
                old.unlink(missing_ok=True)
            return
        if exit_status is not None and 0 <= exit_status < 128 and archive.making.stat().st_size == 0:
            archive.path.with_suffix(CANNOT).touch()  # it ended by itself, writing nothing: it cannot
        archive.making.unlink(missing_ok=True)


def _key(java: Path, spark_home: Path, java_options: str) -> str:
    """What the archive depends on: the Java build (its JVM library and class modules), the jars of the
    driver's class path, and the JVM options."""
    home = java.resolve().parent.parent
    built = [_identity(home / "lib" / "server" / "libjvm.so"), _identity(home / "lib" / "modules")]
    jars = sorted(_identity(jar) for jar in (spark_home / "jars").glob("*.jar"))
    described = json.dumps([str(home), built, jars, java_options, os.environ.get("SPARK_CONF_DIR")])
    return hashlib.sha256(described.encode()).hexdigest()[:20]


def _identity(path: Path) -> list:
    try:
        found = path.stat()
    except OSError:
        return [path.name, None]
    return [path.name, found.st_size, found.st_mtime_ns]


def _modified(path: Path) -> float:
    with contextlib.suppress(OSError):
        return path.stat().st_mtime
    return 0.0


def _remove_stale(folder: Path) -> None:
    """Partial archives of commands killed before their JVM exited."""
    for partial in folder.glob(".driver-*.jsa.making"):
        if untouched_for(partial, STALE_SECONDS):
            partial.unlink(missing_ok=True)
