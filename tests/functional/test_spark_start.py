"""Starting Spark's JVM (pipeline/spark.py), in a process of its own: nothing of it outlives an interrupt, and
the driver's class-data archive is made once, whole, then mapped."""

import os
import signal
import subprocess
import sys
import time
import zipfile

import pytest

from cli_process import without_progress
from test_cluster import QUIET_DRIVER, SPARK_HOME, standalone_cluster

# A real SIGINT, sent the moment pyspark has started the JVM and before it has connected to it.
INTERRUPT_AS_THE_JVM_STARTS = """
import os, signal, subprocess, sys
import pyspark.java_gateway

class InterruptOnStart(subprocess.Popen):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        print(self.pid, flush=True)
        os.kill(os.getpid(), signal.SIGINT)

pyspark.java_gateway.Popen = InterruptOnStart
from pipeline.spark import spark_context
try:
    spark_context("local[1]", "interrupted-as-it-starts")
except KeyboardInterrupt:
    sys.exit(130)
"""


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_orphan_jvm_after_ctrl_c_during_spark_start_up(tmp_path):
    done = subprocess.run([sys.executable, "-c", INTERRUPT_AS_THE_JVM_STARTS], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "BACCARAT_LOG_DIR": str(tmp_path)})
    jvm = int(done.stdout.split()[0])
    try:
        deadline = time.monotonic() + 30
        while alive(jvm) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert done.returncode == 130, done.stderr
        assert not alive(jvm), "the JVM outlived the interrupted process"
    finally:
        if alive(jvm):
            os.kill(jvm, signal.SIGKILL)


def test_the_first_spark_command_makes_the_drivers_archive_and_the_next_ones_map_it(tmp_path):
    """pipeline/spark_archive.py: the first `baccarat` that starts Spark waits for its JVM to write the
    class-data archive and keeps it whole under its name; the next driver's JVM loads its classes from
    it (Java's own class-loading log says so), and both commands end as any command does. The cache and
    log folders' paths hold a space and a quote (a log folder with a space stopped every driver)."""
    cache = tmp_path / "the user's cache"  # a space and a quote: the paths are in the JVM's option string
    env = os.environ | {"BACCARAT_CACHE_DIR": str(cache), "BACCARAT_LOG_DIR": str(tmp_path / "Spark's logs")}
    simulate = [sys.executable, "-m", "pipeline.cli", "simulate", "--shoes", "20", "--seed", "3", "--out", str(tmp_path / "out")]
    first = subprocess.run([*simulate, "--run-id", "first"], capture_output=True, text=True, timeout=300, env=env)
    assert first.returncode == 0 and not without_progress(first.stderr), first.stderr
    assert [path.name.startswith("driver-") and path.suffix == ".jsa" for path in (cache / "jvm").iterdir()] == [True]
    loaded = tmp_path / "loaded"
    loaded.mkdir()
    java_log = {"JDK_JAVA_OPTIONS": f"-Xlog:class+load=info:file={loaded}/%p.txt"}
    second = subprocess.run([*simulate, "--run-id", "second"], capture_output=True, text=True, timeout=300,
                            env=env | java_log)
    assert second.returncode == 0 and not without_progress(second.stderr), second.stderr
    assert any("source: shared objects file (top)" in log.read_text() for log in loaded.iterdir())
    assert len(list((cache / "jvm").iterdir())) == 1


def test_a_truncated_archive_goes_and_the_command_ends_as_without_it(tmp_path):
    """Java checks an archive's header, not that its file holds the pages the header names: a truncated
    archive (a disk that lost its end) stopped every later driver as it mapped them (SIGBUS), each command
    ending in exit 2 and a crash report in the current folder. The driver starts again without it, the
    archive goes (the next command makes it), and the JVM's report is beside Spark's logs."""
    cache = tmp_path / "cache"
    env = os.environ | {"BACCARAT_CACHE_DIR": str(cache), "BACCARAT_LOG_DIR": str(tmp_path / "logs")}
    simulate = [sys.executable, "-m", "pipeline.cli", "simulate", "--shoes", "20", "--seed", "3", "--out", str(tmp_path / "out")]
    assert subprocess.run([*simulate, "--run-id", "first"], capture_output=True, env=env, timeout=300).returncode == 0
    [archive] = (cache / "jvm").iterdir()
    made = archive.read_bytes()
    archive.chmod(0o644)
    archive.write_bytes(made[:len(made) // 2])
    work = tmp_path / "work"
    work.mkdir()
    second = subprocess.run([*simulate, "--run-id", "second"], capture_output=True, text=True, timeout=300,
                            env=env, cwd=work)
    assert second.returncode == 0 and not without_progress(second.stderr), second.stderr
    assert list(work.iterdir()) == [] and list((tmp_path / "logs").glob("hs_err_pid*.log"))
    assert not archive.exists()


@pytest.mark.slow  # a standalone cluster of its own
def test_executors_on_this_host_load_their_classes_from_the_drivers_archive(tmp_path, monkeypatch):
    """pipeline/spark.py, launched_conf: a standalone master on 127.0.0.1 has its workers here, and their
    executors map the archive the driver maps (Java's class-loading log of the executor's JVM says so)."""
    env = {"BACCARAT_CACHE_DIR": str(tmp_path / "cache"), "BACCARAT_LOG_DIR": str(tmp_path / "logs")}
    simulate = [sys.executable, "-m", "pipeline.cli", "simulate", "--shoes", "20", "--seed", "3", "--out", str(tmp_path / "out")]
    made = subprocess.run([*simulate, "--run-id", "first"], capture_output=True, text=True, timeout=300,
                          env=os.environ | env)
    assert made.returncode == 0, made.stderr
    loaded = tmp_path / "loaded"
    loaded.mkdir()
    monkeypatch.setenv("JDK_JAVA_OPTIONS", f"-Xlog:class+load=info:file={loaded}/%p.txt")  # the cluster's JVMs too
    (tmp_path / "cluster").mkdir()
    with standalone_cluster(tmp_path / "cluster", 1) as (url, cluster_env, _):
        mapped = subprocess.run([*simulate, "--run-id", "second", "--master", url], capture_output=True, text=True,
                                timeout=300, env=cluster_env | env)
    assert mapped.returncode == 0, mapped.stderr
    [executor] = [log.read_text() for log in loaded.iterdir() if "CoarseGrainedExecutorBackend " in log.read_text()]
    assert "source: shared objects file (top)" in executor


# A driver under spark-submit: which daemon its executors fork their Python workers from.
PRINT_THE_DAEMON = """
from pipeline.spark import spark_context
print(spark_context(None, "daemon-probe").getConf().get("spark.python.daemon.module", "pyspark's own"))
"""


def test_executors_given_the_package_by_py_files_keep_pysparks_daemon(tmp_path):
    """Their workers add the --py-files zip to the path as a task starts, after the daemon has started: a
    daemon of the package could not be imported there (pipeline/spark.py, executor_settings)."""
    probe, shipped = tmp_path / "probe.py", tmp_path / "pipeline.zip"
    probe.write_text(PRINT_THE_DAEMON)
    with zipfile.ZipFile(shipped, "w"):
        pass
    submit = [str(SPARK_HOME / "bin" / "spark-submit"), "--master", "local[1]", *QUIET_DRIVER]

    def daemon(*options: str) -> str:
        done = subprocess.run(submit + [*options, str(probe)], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        return done.stdout.strip().splitlines()[-1]

    assert daemon("--py-files", str(shipped)) == "pyspark's own"
    assert daemon() == "pipeline.spark_daemon"



def _handled(server, error: Exception) -> None:
    """The accumulator server's answer to `error` in one of its connections."""
    try:
        raise error
    except type(error):
        server.handle_error(None, ("127.0.0.1", 0))


def test_the_accumulator_server_prints_no_traceback_for_a_connection_its_jvm_ended(spark, capfd):
    """A terminal's Ctrl-C reaches the driver's JVM too, which then cuts its connection to the accumulator
    server mid-stream: pyspark's handler printed an EOFError's traceback above the command's one line (5 of
    7 interrupted simulates; test_exit_codes.py sends that Ctrl-C). Any other error is still printed."""
    server = spark._accumulatorServer
    _handled(server, EOFError())
    _handled(server, ConnectionResetError())
    assert capfd.readouterr().err == ""
    _handled(server, ValueError("The value of the provided token to the AccumulatorServer is not correct."))
    assert "ValueError: The value of the provided token" in capfd.readouterr().err
