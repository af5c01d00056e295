"""The --master URL of every Spark command, checked before Spark starts (pipeline/spark.py)."""

import contextlib
import re
import socket
import struct
import threading

import pytest

from pipeline.errors import BaccaratError, WorldFailure
from pipeline.spark import QUICK_JVM, _spark_home, check_java
from pipeline.spark_master import check_master
from pipeline.spark_archive import driver_archive


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize("master", ["nonsense", "spark://nohost", "spark://127.0.0.1:port", "spark://:7077"])
def test_a_malformed_master_is_bad_input(master):
    with pytest.raises(BaccaratError) as refused:
        check_master(master)
    assert refused.value.exit_status == 2 and master in str(refused.value)


def test_an_unreachable_master_is_a_failure_of_the_world_not_bad_input():
    master = f"spark://127.0.0.1:{closed_port()}"
    with pytest.raises(WorldFailure) as failed:
        check_master(master)
    assert failed.value.exit_status == 1 and f"cannot reach the Spark master {master}" in str(failed.value)


@pytest.mark.parametrize("master", ["local", "local[2]", "local[*]", "yarn", "k8s://https://host:6443"])
def test_a_master_spark_starts_by_itself_is_taken_as_given(master):
    assert check_master(master) == master


@pytest.mark.parametrize("master", ["local[99999]", "local[1025]", "local[1025,4]"])
def test_local_with_more_threads_than_a_jvm_starts_was_a_py4j_traceback(master):
    """`baccarat simulate --master 'local[99999]'` ended in a Py4JJavaError traceback (exit 1): the driver's
    JVM could not create its threads ("unable to create native thread"). Refused in one line, before Java."""
    with pytest.raises(BaccaratError, match=rf"Spark master '{re.escape(master)}': at most local\[1,024\]"):
        check_master(master)
    assert check_master("local[1024]") == "local[1024]"


@pytest.mark.parametrize("command", [
    ("simulate", "--shoes", "1", "--seed", "1"),
    ("run",),
    ("composition", "--run-id", "r"),
    ("backtest", "--run-id", "r", "--systems", "flat_banker"),
    ("marts",),
])
@pytest.mark.parametrize("master", ["mesos://host:5050", "local[0]", "spark://host"])
def test_a_malformed_master_is_refused_as_the_option_is_read(cli, tmp_path, command, master):
    """`baccarat run --master mesos://host:5050` (and composition, backtest, simulate) on a run already
    committed said "nothing to do", built the marts in-process and exited 0: the master was judged only
    when Spark started. It is refused in one line before the store is touched, whatever is there."""
    out = tmp_path / "data"
    status, stdout, err = cli(*command, "--out", out, "--master", master)
    assert status == 2 and stdout == ""
    assert err.startswith("error: Invalid value for '--master': ") and master in err and err.count("\n") == 1
    assert not out.exists()


# What Spark 4.3's launcher printed (its first lines) for `baccarat simulate --master yarn` with neither
# HADOOP_CONF_DIR nor YARN_CONF_DIR set, before it exited 1.
YARN_UNCONFIGURED = """WARNING: Using incubator modules: jdk.incubator.vector
Exception in thread "main" org.apache.spark.SparkException: When running with master 'yarn' either \
HADOOP_CONF_DIR or YARN_CONF_DIR must be set in the environment.
\tat org.apache.spark.deploy.SparkSubmitArguments.error(SparkSubmitArguments.scala:670)
"""


def test_a_jvm_that_stops_as_it_starts_says_why_in_the_one_line(cli, tmp_path, monkeypatch):
    """`baccarat simulate --master yarn` without Hadoop's configuration said only "Spark's JVM stopped as it
    started: its output is in LOG"; the reason Spark gave, its main thread's exception, is in the line."""
    java = tmp_path / "jdk" / "bin" / "java"  # not a JVM: it prints what Spark's did and stops
    java.parent.mkdir(parents=True)
    java.write_text(f"#!/bin/sh\ncat >&2 <<'END'\n{YARN_UNCONFIGURED}END\nexit 1\n")
    java.chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "jdk"))
    monkeypatch.setenv("BACCARAT_LOG_DIR", str(tmp_path / "logs"))
    status, out, err = cli("simulate", "--shoes", "1", "--seed", "1", "--out", tmp_path / "data", "--master", "yarn")
    [log] = (tmp_path / "logs").iterdir()
    assert status == 2 and out == "" and err == (
        "error: Spark's JVM stopped as it started (SparkException: When running with master 'yarn' either "
        f"HADOOP_CONF_DIR or YARN_CONF_DIR must be set in the environment.): its output is in {log}\n")


def test_a_jvm_that_stops_as_it_starts_without_the_archive_too_keeps_the_archive(cli, tmp_path, monkeypatch):
    """A driver that stops as it maps the archive starts again without it (a truncated archive stops Java);
    when it stops again, the archive was not the cause: it stays, and the line says why it stopped."""
    java = tmp_path / "jdk" / "bin" / "java"  # records how it was started, prints what Spark's did and stops
    java.parent.mkdir(parents=True)
    java.write_text(f"#!/bin/sh\necho \"$*\" >> {tmp_path}/starts\ncat >&2 <<'END'\n{YARN_UNCONFIGURED}END\nexit 1\n")
    java.chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "jdk"))
    monkeypatch.setenv("BACCARAT_LOG_DIR", str(tmp_path / "logs"))
    archive = driver_archive(java, _spark_home(), QUICK_JVM, make=True)
    archive.making.rename(archive.path)
    status, out, err = cli("simulate", "--shoes", "1", "--seed", "1", "--out", tmp_path / "data", "--master", "yarn")
    assert status == 2 and out == "" and err.count("\n") == 1 and "HADOOP_CONF_DIR or YARN_CONF_DIR" in err, err
    mapping = [f"-XX:SharedArchiveFile={archive.path}" in start for start in (tmp_path / "starts").read_text().splitlines()]
    assert mapping == [True, False] and archive.path.is_file()


def test_a_java_home_without_java_is_named_in_the_one_line(tmp_path, monkeypatch):
    """JAVA_HOME set to a folder without bin/java said "none was found: install it ... or set JAVA_HOME", to
    a user who had set it: the line names the folder it looked in."""
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "jdk-gone"))
    with pytest.raises(BaccaratError) as refused:
        check_java()
    assert refused.value.exit_status == 2
    assert str(refused.value) == (f"JAVA_HOME is {tmp_path / 'jdk-gone'}, which holds no bin/java: point it at "
                                  "a Java 17 or later, or unset it to use the PATH's java")


@contextlib.contextmanager
def answering_master():
    """A port that answers the master probe as a standalone master does (a failure reply naming the
    stream asked for); yields the port."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        def answer():
            connection, _ = server.accept()
            with connection, connection.makefile("rb") as reading:
                request = reading.read(8)
                request += reading.read(struct.unpack(">q", request)[0] - 8)
                connection.sendall(request[:8] + bytes([8]) + request[9:])

        answering = threading.Thread(target=answer, daemon=True)
        answering.start()
        yield server.getsockname()[1]
        answering.join(timeout=10)


def test_a_standby_master_that_is_down_leaves_the_leader_to_answer():
    """`--master spark://127.0.0.1:7199,127.0.0.1:7177` (standalone high availability: Spark registers with
    every master and the one leading answers) with the first down and the second up ended "cannot reach the
    Spark master ...: Connection refused", exit 1: every master named had to answer. One answering is enough,
    as it is for Spark; none answering is still a failure of the world that names each."""
    down, also_down = closed_port(), closed_port()
    with answering_master() as port:
        master = f"spark://127.0.0.1:{down},127.0.0.1:{port}"
        assert check_master(master) == master
    master = f"spark://127.0.0.1:{down},127.0.0.1:{also_down}"
    with pytest.raises(WorldFailure) as failed:
        check_master(master)
    assert str(failed.value) == (f"cannot reach any of the Spark masters {master}: 127.0.0.1:{down}: Connection "
                                 f"refused; 127.0.0.1:{also_down}: Connection refused")
