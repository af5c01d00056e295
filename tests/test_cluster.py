"""A real Spark standalone cluster on 127.0.0.1: the job submitted through spark-submit deals
exactly what local mode deals."""

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyspark
import pytest
from conftest import read_table, simulate
from polars.testing import assert_frame_equal

from pipeline.runs import read_manifest

SPARK_HOME = Path(pyspark.__file__).parent
JOB = Path(__file__).parents[1] / "jobs" / "simulate.py"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(condition, what: str, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.5)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A standalone master and one worker, stopped afterwards; yields (master URL, environment)."""
    logs = tmp_path_factory.mktemp("cluster")
    env = {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": "127.0.0.1",
           "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    port = free_port()
    url = f"spark://127.0.0.1:{port}"
    spark_class = str(SPARK_HOME / "bin" / "spark-class")
    commands = {
        "master": [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                   "--port", str(port), "--webui-port", str(free_port())],
        "worker": [spark_class, "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
                   "--cores", "2", "--memory", "2g", "--webui-port", str(free_port()),
                   "--work-dir", str(logs / "work")],
    }
    processes = {}
    try:
        for name, command in commands.items():
            log = open(logs / f"{name}.log", "w")
            processes[name] = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
            if name == "master":
                wait_for(lambda: socket.socket().connect_ex(("127.0.0.1", port)) == 0, "the master")
        wait_for(lambda: "Registering worker" in (logs / "master.log").read_text(), "the worker to register")
        yield url, env
    finally:
        for process in processes.values():
            process.terminate()
        for process in processes.values():
            process.wait(timeout=30)


@pytest.mark.slow
def test_cluster_run_equals_local_run(cluster, spark, tmp_path):
    url, env = cluster
    local = simulate(spark, tmp_path / "local", seed=31, shoes=160, partitions=2)
    submitted = subprocess.run(
        [str(SPARK_HOME / "bin" / "spark-submit"), "--master", url, str(JOB),
         "--shoes", "160", "--seed", "31", "--out", str(tmp_path / "cluster"), "--run-id", local["run_id"],
         "--partitions", "5"],
        env=env, capture_output=True, text=True, timeout=300,
    )
    assert submitted.returncode == 0, submitted.stderr[-3000:]
    on_cluster = read_manifest(tmp_path / "cluster", local["run_id"])
    assert on_cluster["spark_master"] == url and on_cluster["partitions"] == 5
    for table in ("rounds", "shoes"):
        assert_frame_equal(read_table(tmp_path / "local", local["run_id"], table),
                           read_table(tmp_path / "cluster", local["run_id"], table))
