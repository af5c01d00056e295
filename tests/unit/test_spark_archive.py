"""The class-data archive of the driver's JVM (pipeline/spark_archive.py): made once per Java, pyspark and
JVM options, kept only once its JVM exited cleanly, never half-written under its name. No JVM: a fake
Java home and fake JVM processes."""

import contextlib
import os
import time
from types import SimpleNamespace

import pytest

from pipeline import spark
from pipeline.spark_archive import KEPT_ARCHIVES, STALE_SECONDS, driver_archive, keep_made_archive


@pytest.fixture
def java(tmp_path, monkeypatch):
    """A Java home and a Spark home of files, and the cache in tmp_path; returns (java, spark_home)."""
    home = tmp_path / "jdk"
    (home / "bin").mkdir(parents=True)
    (home / "lib" / "server").mkdir(parents=True)
    for part in ("bin/java", "lib/server/libjvm.so", "lib/modules"):
        (home / part).write_text(part)
    (tmp_path / "spark" / "jars").mkdir(parents=True)
    (tmp_path / "spark" / "jars" / "spark-core.jar").write_text("classes")
    monkeypatch.setenv("BACCARAT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SPARK_CONF_DIR", raising=False)
    return home / "bin" / "java", tmp_path / "spark"


def test_a_driver_makes_the_archive_only_when_asked_and_maps_it_once_made(java):
    assert driver_archive(*java, "-Xquick", make=False) is None
    making = driver_archive(*java, "-Xquick", make=True)
    assert making.making.is_file() and making.making.parent == making.path.parent and not making.path.exists()
    assert f"-XX:ArchiveClassesAtExit={making.making}" in making.java_options()
    making.making.write_bytes(b"classes")
    keep_made_archive(making, exit_status=0)
    mapped = driver_archive(*java, "-Xquick", make=True)
    assert mapped.making is None and mapped.path == making.path and mapped.path.read_bytes() == b"classes"
    assert f"-XX:SharedArchiveFile={mapped.path}" in mapped.java_options()
    assert list(mapped.path.parent.iterdir()) == [mapped.path]  # no partial file left


@pytest.mark.parametrize("status", [1, 137, -9, None])
def test_an_archive_whose_jvm_did_not_exit_cleanly_is_not_kept(java, status):
    making = driver_archive(*java, "-Xquick", make=True)
    making.making.write_bytes(b"torn")
    keep_made_archive(making, exit_status=status)
    assert not making.path.exists() and not making.making.exists()
    assert driver_archive(*java, "-Xquick", make=True).making is not None  # the next command tries again


def test_where_java_wrote_no_archive_later_drivers_neither_make_nor_map_one(java):
    """A JVM that exits cleanly having written nothing (SPARK_CONF_DIR, a folder of files, on its class
    path): every later command paid for making one again, 16 to 18 s against 8 s."""
    making = driver_archive(*java, "-Xquick", make=True)
    keep_made_archive(making, exit_status=1)  # what Java 17 does with a folder of files on the class path
    assert not making.path.exists() and not making.making.exists()
    assert driver_archive(*java, "-Xquick", make=True) is None
    assert driver_archive(*java, "-Xother", make=True).making is not None  # other options: tried anew


def test_a_driver_that_did_not_start_leaves_no_partial_file(java):
    making = driver_archive(*java, "-Xquick", make=True)
    keep_made_archive(making, exit_status=None)
    assert not making.making.exists() and driver_archive(*java, "-Xquick", make=True).making is not None


def test_another_java_pyspark_or_options_is_another_archive(java):
    path = driver_archive(*java, "-Xquick", make=True).path
    java_path, spark_home = java
    assert driver_archive(java_path, spark_home, "-Xother", make=True).path != path
    (spark_home / "jars" / "extra.jar").write_text("more")
    assert driver_archive(java_path, spark_home, "-Xquick", make=True).path != path
    (spark_home / "jars" / "extra.jar").unlink()
    assert driver_archive(java_path, spark_home, "-Xquick", make=True).path == path
    (java_path.parent.parent / "lib" / "server" / "libjvm.so").write_text("an update of Java")
    assert driver_archive(java_path, spark_home, "-Xquick", make=True).path != path


def test_only_the_newest_archives_stay(java):
    java_path, spark_home = java
    made = []
    for n in range(KEPT_ARCHIVES + 2):
        archive = driver_archive(java_path, spark_home, f"-Xoption{n}", make=True)
        archive.making.write_bytes(b"classes")
        keep_made_archive(archive, exit_status=0)
        os.utime(archive.path, (time.time() + n, time.time() + n))
        made.append(archive.path)
    assert sorted(made[0].parent.glob("driver-*.jsa")) == sorted(made[-KEPT_ARCHIVES:])


def test_a_killed_commands_partial_archive_goes_once_stale_and_a_running_ones_stays(java):
    first = driver_archive(*java, "-Xquick", make=True).making
    second = driver_archive(*java, "-Xquick", make=True).making
    os.utime(first, (time.time() - STALE_SECONDS - 1,) * 2)
    third = driver_archive(*java, "-Xquick", make=True).making
    assert not first.exists() and second.exists() and third.exists()


def test_a_cache_folder_that_cannot_be_written_leaves_the_driver_as_it_was(java, tmp_path, monkeypatch):
    (tmp_path / "a-file").write_text("not a folder")
    monkeypatch.setenv("BACCARAT_CACHE_DIR", str(tmp_path / "a-file"))
    assert driver_archive(*java, "-Xquick", make=True) is None


class FakeJvm:
    """A driver's JVM process that exits with `status` once its input ends, or waits for a Ctrl-C."""

    def __init__(self, status=0, interrupt=False):
        self.status, self.interrupt, self.killed, self.waited = status, interrupt, False, False
        self.stdin = SimpleNamespace(close=lambda: None)

    def wait(self, timeout):
        self.waited = True
        if self.interrupt:
            raise KeyboardInterrupt
        return self.status

    def kill(self):
        self.killed = True


def ended(making, jvm: FakeJvm, keep: bool) -> bool:
    """Whether a Ctrl-C ended the wait for `jvm`, a driver making `making`, at the end of a command that
    succeeded (`keep`) or not."""
    context = SimpleNamespace(_gateway=SimpleNamespace(proc=jvm), stop=lambda: None)
    with spark.drivers_ending_here() as end_drivers:
        spark._MAKING.append((context, making))
        return end_drivers(keep=keep)


def test_the_console_lets_the_jvm_write_its_archive_and_keeps_it(java):
    making = driver_archive(*java, "-Xquick", make=True)
    making.making.write_bytes(b"classes")
    jvm = FakeJvm()
    assert not ended(making, jvm, keep=True)
    assert making.path.read_bytes() == b"classes" and jvm.waited and not jvm.killed


def test_a_ctrl_c_while_the_jvm_writes_its_archive_stops_it_and_keeps_nothing(java):
    making = driver_archive(*java, "-Xquick", make=True)
    jvm = FakeJvm(interrupt=True)
    assert ended(making, jvm, keep=True)
    assert jvm.killed and not making.path.exists() and not making.making.exists()


def test_a_command_that_failed_or_was_interrupted_does_not_wait_for_an_archive(java):
    """Its JVM is killed before it could write one (a Ctrl-C'd first command waited a minute on a busy
    machine), and nothing is kept or marked."""
    making = driver_archive(*java, "-Xquick", make=True)
    jvm = FakeJvm()
    assert not ended(making, jvm, keep=False)
    assert jvm.killed and not jvm.waited and not making.making.exists() and not making.path.exists()
    assert driver_archive(*java, "-Xquick", make=True).making is not None  # the next command makes it


def test_a_command_that_raised_stops_its_driver_keeping_nothing(java):
    making = driver_archive(*java, "-Xquick", make=True)
    jvm = FakeJvm()
    context = SimpleNamespace(_gateway=SimpleNamespace(proc=jvm), stop=lambda: None)
    with contextlib.suppress(RuntimeError), spark.drivers_ending_here():
        spark._MAKING.append((context, making))
        raise RuntimeError("the command's own error")
    assert jvm.killed and not jvm.waited and not making.making.exists() and not spark._MAKING
