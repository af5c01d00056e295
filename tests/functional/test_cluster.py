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

import pyarrow.fs as pafs
import pyspark
import pytest
from cli_process import without_progress
from spark_jobs import read_table, simulate
from local_s3 import free_port
from polars.testing import assert_frame_equal

from pipeline.runs import read_run
from pipeline.spark import QUICK_JVM
from pipeline.spark_master import check_master
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


@contextlib.contextmanager
def standalone_cluster(logs: Path, workers: int, withheld: str = "NONE_", pinned: bool = False):
    """A standalone master and `workers` one-core workers (with the driver's environment, less the
    variables whose names start with `withheld`), each in its own process group (so that killing the
    group takes its executor too); stopped afterwards. Yields (URL, the driver's environment, processes by name).
    `pinned`: worker n and its executors run on the host's n-th CPU alone, as on a one-core machine."""
    env = {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": "127.0.0.1",
           "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    daemons = {**env, "SPARK_DAEMON_JAVA_OPTS": QUICK_JVM}  # a master and workers that only schedule
    port = free_port()
    url = f"spark://127.0.0.1:{port}"
    worker_env = {name: value for name, value in daemons.items() if not name.startswith(withheld)}
    spark_class = str(SPARK_HOME / "bin" / "spark-class")
    commands = {
        "master": [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                   "--port", str(port), "--webui-port", str(free_port())],
        **{f"worker{n}": [spark_class, "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
                          "--cores", "1", "--memory", "1g", "--webui-port", str(free_port()),
                          "--work-dir", str(logs / f"work{n}")] for n in range(1, workers + 1)},
    }
    processes = {}
    try:
        for name, command in commands.items():
            log = open(logs / f"{name}.log", "w")
            processes[name] = subprocess.Popen(command, env=daemons if name == "master" else worker_env,
                                               stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                               preexec_fn=_on_cpu(name) if pinned else None)
            if name == "master":
                wait_for(lambda: socket.socket().connect_ex(("127.0.0.1", port)) == 0, "the master")
        wait_for(lambda: (logs / "master.log").read_text().count("Registering worker") == workers, "the workers")
        yield url, env, processes
    finally:
        for process in processes.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        for process in processes.values():
            process.wait(timeout=30)


def _on_cpu(name: str):
    """For process `name`, workerN: its affinity set to the host's N-th CPU before it starts."""
    if name == "master":
        return None
    cpu = sorted(os.sched_getaffinity(0))[int(name.removeprefix("worker")) - 1]
    return lambda: os.sched_setaffinity(0, {cpu})


@pytest.mark.slow  # a standalone master of its own
def test_the_master_probe_leaves_no_error_trace_in_a_real_masters_log(tmp_path):
    """Every command given --master probes it first: a real master answers the probe without logging it."""
    with standalone_cluster(tmp_path, workers=0) as (url, _, _):
        assert check_master(url) == url
        # the master's port answers before it logs its start: CI read the log in between once, under load
        wait_for(lambda: "Starting Spark master" in (tmp_path / "master.log").read_text(), "the master's start line")
        log = (tmp_path / "master.log").read_text()
    assert "Starting Spark master" in log and "ERROR" not in log and "Exception" not in log


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, s3_endpoint):
    """Two workers that inherit the local S3 server's AWS variables."""
    with standalone_cluster(tmp_path_factory.mktemp("cluster"), 2) as running:
        yield running


@pytest.mark.slow
def test_cluster_run_into_a_bucket_equals_local_run_and_feeds_marts_and_report(cluster, spark, cli, tmp_path, bucket):
    """The cluster writes to a bucket of the local S3 server (the worker-killed test writes to a disk)."""
    url, env, _ = cluster
    out = bucket
    local = simulate(spark, tmp_path / "local", seed=31, shoes=160, partitions=2)
    submitted = subprocess.run(
        [str(SPARK_HOME / "bin" / "spark-submit"), "--master", url, *QUIET_DRIVER, str(JOB),
         "--shoes", "160", "--seed", "31", "--out", out, "--run-id", local.run_id, "--partitions", "5"],
        env=env, capture_output=True, text=True, timeout=300,
    )
    assert submitted.returncode == 0, submitted.stderr[-3000:]
    # Nothing on stderr but the JVM's own note, which it prints before any log is set up.
    assert without_progress(submitted.stderr) == "WARNING: Using incubator modules: jdk.incubator.vector\n", \
        submitted.stderr[-3000:]
    on_cluster = read_run(Store.parse(out), local.run_id)
    assert on_cluster.spark_master == url and on_cluster.partitions == 5
    for table in ("rounds", "shoes"):
        assert_frame_equal(read_table(tmp_path / "local", local.run_id, table),
                           read_table(out, local.run_id, table))
    warehouse, page = tmp_path / "warehouse.duckdb", tmp_path / "report.html"
    status, _, err = cli("marts", "--out", out, "--warehouse", warehouse)
    assert status == 0, err
    status, _, err = cli("report", "--out", out, "--warehouse", warehouse, "--page", page)
    assert status == 0 and local.run_id in page.read_text(encoding="utf-8"), err


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
    # a busy CI machine took over 120 s to start the job and write its first files (the job deals 16 of them)
    wait_for(lambda: written.is_dir() and len(list(written.glob("part-*.parquet"))) >= 2, "the first files", 300)
    os.killpg(processes["worker2"].pid, signal.SIGKILL)  # the worker, its executor and Python workers
    _, stderr = job.communicate(timeout=300)
    assert job.returncode == 0, stderr[-3000:]
    assert "Lost executor" in stderr and "worker lost" in stderr  # the fault hit a running job
    assert processes["worker2"].wait(timeout=30) != 0
    local = simulate(spark, tmp_path / "local", seed=77, shoes=40_000, partitions=16, run_id="survivor")
    on_cluster = read_run(Store.parse(str(tmp_path / "cluster")), "survivor")
    assert [f.sha256 for f in on_cluster.files] == [f.sha256 for f in local.files]
    assert sorted(p.name for p in written.iterdir()) == sorted(
        f.path.rsplit("/", 1)[1] for f in on_cluster.files_of("rounds"))


@pytest.mark.slow
def test_executors_without_the_aws_variables_fail_in_one_line_commit_nothing_and_get_them_by_spark_executor_env(
        tmp_path, spark, bucket):
    """The cluster that committed objects holding the upload's chunk encoding: its executors lacked the
    AWS_* variables the driver had. Its tasks now fail before writing, naming what is missing; the
    README's route (spark.executorEnv.* in a properties file, never on the command line) then works."""
    secret = os.environ["AWS_SECRET_ACCESS_KEY"]
    (tmp_path / "logs").mkdir()
    with standalone_cluster(tmp_path / "logs", 1, withheld="AWS_") as (url, env, _):
        command = [str(SPARK_HOME / "bin" / "spark-submit"), "--master", url, *QUIET_DRIVER]
        job = [str(JOB), "--shoes", "40", "--seed", "9", "--out", bucket, "--run-id", "c", "--partitions", "2"]
        failed = subprocess.run(command + job, env=env, capture_output=True, text=True, timeout=600)
        # spark-submit passes on its Python driver's output as its own stdout; its stderr holds the JVM's lines.
        lines = [line for line in (failed.stdout + failed.stderr).splitlines() if line.startswith("error: ")]
        assert failed.returncode == 1 and len(lines) == 1, failed.stderr[-3000:] + failed.stdout[-3000:]
        assert lines[0].startswith(f"error: run 'c' was not committed: a task failed writing under {bucket}: "
                                   "the executor on "), lines[0]
        missing = lines[0].split(" lacks ", 1)[1].split(", which the driver uses for ", 1)[0].split(", ")
        assert {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ENDPOINT_URL", "AWS_ALLOW_HTTP"} <= set(missing)
        store = Store.parse(bucket)
        assert read_run(store, "c") is None and store.delta_table("rounds") is None  # nothing committed
        assert not store.filesystem.get_file_info(pafs.FileSelector(store.fs_path(), allow_not_found=True))

        properties = tmp_path / "executor-credentials.conf"
        properties.write_text("".join(f"spark.executorEnv.{name} {value}\n"
                                      for name, value in os.environ.items() if name.startswith("AWS_")))
        properties.chmod(0o600)
        rerun = subprocess.run(command + ["--properties-file", str(properties)] + job, env=env,
                               capture_output=True, text=True, timeout=600)
        assert rerun.returncode == 0, rerun.stderr[-3000:]
        assert secret not in failed.stderr + rerun.stderr + rerun.stdout
    local = simulate(spark, tmp_path / "local", seed=9, shoes=40, partitions=2, run_id="c")
    assert [f.sha256 for f in read_run(store, "c").files] == [f.sha256 for f in local.files]


@pytest.mark.slow
def test_marts_on_executors_without_the_aws_variables_name_them_as_simulate_does(tmp_path, spark, bucket):
    """`baccarat marts --master spark://... --out s3://...` on executors without the AWS_* variables said
    "cannot read s3://.../shoes/...parquet: ... AWS Error ACCESS_DENIED during HeadObject operation" (the
    executors' requests went unsigned), where simulate, composition and backtest name the variables the
    executors lack and how to give them. The marts' tasks now check as theirs do, before reading."""
    simulate(spark, bucket, seed=5, shoes=40, partitions=2, run_id="m")
    (tmp_path / "logs").mkdir()
    with standalone_cluster(tmp_path / "logs", 1, withheld="AWS_") as (url, env, _):
        env = {name: value for name, value in env.items() if not name.startswith("PYSPARK_GATEWAY_")}
        failed = subprocess.run([sys.executable, "-m", "pipeline.cli", "marts", "--master", url, "--out", bucket,
                                 "--warehouse", str(tmp_path / "warehouse.duckdb")],
                                env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    lines = [line for line in failed.stderr.splitlines() if line.startswith("error: ")]
    assert failed.returncode == 1 and len(lines) == 1 and failed.stdout == "", failed.stderr[-3000:]
    assert lines[0].startswith("error: the executor on "), lines[0]
    missing = lines[0].split(" lacks ", 1)[1].split(", which the driver uses for ", 1)[0].split(", ")
    assert {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ENDPOINT_URL", "AWS_ALLOW_HTTP"} <= set(missing)
    assert "spark.executorEnv.NAME" in lines[0]
    assert not (tmp_path / "warehouse.duckdb").exists()
