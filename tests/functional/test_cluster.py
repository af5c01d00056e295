"""A real Spark standalone cluster on 127.0.0.1: the job submitted through spark-submit deals
exactly what local mode deals."""

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyspark
import pytest
from spark_jobs import read_table, simulate
from local_s3 import free_port
from polars.testing import assert_frame_equal

from pipeline.runs import read_run
from pipeline.storage import Store

SPARK_HOME = Path(pyspark.__file__).parent
JOB = Path(__file__).parents[2] / "jobs" / "simulate.py"
QUIET_DRIVER = ["--driver-java-options",  # as the README submits the job: Spark's driver log keeps to errors
                f"-Dlog4j2.configurationFile={Path(__file__).parents[2] / 'conf' / 'spark' / 'log4j2.properties'}"]


def wait_for(condition, what: str, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.5)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, s3_endpoint):
    """A standalone master and two one-core workers, each worker in its own process group (so that
    killing the group takes its executor too); stopped afterwards. Yields (URL, environment,
    processes by name). The workers inherit the local S3 server's AWS variables."""
    logs = tmp_path_factory.mktemp("cluster")
    env = {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": "127.0.0.1",
           "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    port = free_port()
    url = f"spark://127.0.0.1:{port}"
    spark_class = str(SPARK_HOME / "bin" / "spark-class")
    commands = {
        "master": [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                   "--port", str(port), "--webui-port", str(free_port())],
        **{f"worker{n}": [spark_class, "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
                          "--cores", "1", "--memory", "1g", "--webui-port", str(free_port()),
                          "--work-dir", str(logs / f"work{n}")] for n in (1, 2)},
    }
    processes = {}
    try:
        for name, command in commands.items():
            log = open(logs / f"{name}.log", "w")
            processes[name] = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT,
                                               start_new_session=True)
            if name == "master":
                wait_for(lambda: socket.socket().connect_ex(("127.0.0.1", port)) == 0, "the master")
        wait_for(lambda: (logs / "master.log").read_text().count("Registering worker") == 2, "two workers")
        yield url, env, processes
    finally:
        for process in processes.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        for process in processes.values():
            process.wait(timeout=30)


@pytest.mark.slow
def test_cluster_run_into_a_bucket_equals_local_run_and_feeds_marts_and_report(cluster, spark, cli, tmp_path, bucket):
    """The cluster writes to a bucket of the local S3 server (the worker-killed test writes to a disk)."""
    url, env, _ = cluster
    out = bucket
    local = simulate(spark, tmp_path / "local", seed=31, shoes=160, partitions=2)
    submitted = subprocess.run(
        [str(SPARK_HOME / "bin" / "spark-submit"), "--master", url, *QUIET_DRIVER, str(JOB),
         "--shoes", "160", "--seed", "31", "--out", out, "--run-id", local["run_id"], "--partitions", "5"],
        env=env, capture_output=True, text=True, timeout=300,
    )
    assert submitted.returncode == 0, submitted.stderr[-3000:]
    # Nothing on stderr but the JVM's own note, which it prints before any log is set up.
    assert submitted.stderr == "WARNING: Using incubator modules: jdk.incubator.vector\n", submitted.stderr[-3000:]
    on_cluster = read_run(Store.parse(out), local["run_id"])
    assert on_cluster["spark_master"] == url and on_cluster["partitions"] == 5
    for table in ("rounds", "shoes"):
        assert_frame_equal(read_table(tmp_path / "local", local["run_id"], table),
                           read_table(out, local["run_id"], table))
    warehouse, page = tmp_path / "warehouse.duckdb", tmp_path / "report.html"
    status, _, err = cli("marts", "--out", out, "--warehouse", warehouse)
    assert status == 0, err
    status, _, err = cli("report", "--out", out, "--warehouse", warehouse, "--page", page)
    assert status == 0 and local["run_id"] in page.read_text(encoding="utf-8"), err


def submit(url: str, env: dict, out: Path, shoes: int, partitions: int) -> subprocess.Popen:
    return subprocess.Popen(
        [str(SPARK_HOME / "bin" / "spark-submit"), "--master", url, str(JOB), "--shoes", str(shoes),
         "--seed", "77", "--out", str(out), "--run-id", "survivor", "--partitions", str(partitions)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.slow
def test_a_worker_killed_mid_job_leaves_identical_content(cluster, spark, tmp_path):
    """Runs last in this module: it leaves the cluster with one worker."""
    url, env, processes = cluster
    job = submit(url, env, tmp_path / "cluster", shoes=40_000, partitions=16)
    written = tmp_path / "cluster" / "rounds" / "run_id=survivor"
    wait_for(lambda: written.is_dir() and len(list(written.glob("part-*.parquet"))) >= 2, "the first files", 120)
    os.killpg(processes["worker2"].pid, signal.SIGKILL)  # the worker, its executor and Python workers
    _, stderr = job.communicate(timeout=300)
    assert job.returncode == 0, stderr[-3000:]
    assert "Lost executor" in stderr and "worker lost" in stderr  # the fault hit a running job
    assert processes["worker2"].wait(timeout=30) != 0
    local = simulate(spark, tmp_path / "local", seed=77, shoes=40_000, partitions=16, run_id="survivor")
    on_cluster = read_run(Store.parse(str(tmp_path / "cluster")), "survivor")
    assert [f["sha256"] for f in on_cluster["files"]] == [f["sha256"] for f in local["files"]]
    assert sorted(p.name for p in written.iterdir()) == sorted(
        f["path"].rsplit("/", 1)[1] for f in on_cluster["files"] if f["table"] == "rounds")
