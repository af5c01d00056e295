"""`baccarat simulate` from the command line: summary, idempotence, and bad input that leaves data alone."""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
from cli_process import without_progress
from spark_jobs import simulate

from pipeline.cli import main
from pipeline.runs import read_run
from pipeline.storage import Store


def read_record(folder, run_id):
    return read_run(Store.parse(str(folder)), run_id)


def snapshot(folder):
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


SIMULATE_BASE = ("simulate", "--shoes", 40, "--seed", 1, "--run-id", "base")


@pytest.fixture(scope="module")
def committed_once(spark, tmp_path_factory):
    """A folder holding one committed run made through the CLI, made once for the module."""
    folder = tmp_path_factory.mktemp("committed")
    assert main([str(arg) for arg in (*SIMULATE_BASE, "--out", folder)]) == 0
    return folder


@pytest.fixture
def committed(committed_once, tmp_path):
    """A copy of its own of the folder holding the committed run."""
    return shutil.copytree(committed_once, tmp_path / "data")


def test_summary_names_rounds_shares_files_and_where(spark, cli, tmp_path):
    status, out, err = cli(*SIMULATE_BASE, "--out", tmp_path)
    assert status == 0, err
    folder = tmp_path
    record = read_record(folder, "base")
    assert f"committed run 'base': 40 shoes, {record.rounds:,} rounds" in out
    assert "B " in out and "P " in out and "T " in out
    assert f"row in {folder / 'runs'}" in out


def test_default_run_id_comes_from_rules_seed_and_shoes(spark, cli, tmp_path):
    status, _, _ = cli("simulate", "--shoes", 5, "--seed", 42, "--out", tmp_path, "--rules", "super_six")
    assert status == 0
    assert read_record(tmp_path, "super_six-s42-n5").rules == "super_six"


def test_same_parameters_again_is_a_no_op_that_says_so(committed, cli):
    folder = committed
    before = snapshot(folder)
    status, out, _ = cli("simulate", "--shoes", 40, "--seed", 1, "--out", folder, "--run-id", "base",
                         "--partitions", 4)
    assert status == 0 and "already committed with these parameters" in out
    assert snapshot(folder) == before


def test_overwrite_replaces_a_run_with_other_parameters(committed, cli):
    folder = committed
    status, _, _ = cli("simulate", "--shoes", 30, "--seed", 2, "--out", folder, "--run-id", "base", "--overwrite")
    assert status == 0
    record = read_record(folder, "base")
    assert (record.shoes, record.seed) == (30, 2)
    assert all((folder / f.path).exists() for f in record.files)
    rounds = pl.read_delta(str(folder / "rounds")).filter(pl.col("run_id") == "base")
    assert rounds["shoe_id"].n_unique() == 30 and rounds.height == record.rounds


def test_a_run_another_command_committed_with_other_parameters_while_this_one_dealt_is_kept(
        spark, cli, tmp_path, monkeypatch):
    # both exited 0, and the store held the second run alone (a new user's trial)
    from pipeline import jobs

    checked = jobs.already_committed

    def another_command_commits_first(plan, overwrite, report=print):
        nothing = checked(plan, overwrite, report)
        simulate(spark, tmp_path, shoes=20, seed=6, partitions=2, run_id="same")
        return nothing

    monkeypatch.setattr(jobs, "already_committed", another_command_commits_first)
    status, out, err = cli("simulate", "--shoes", 30, "--seed", 7, "--run-id", "same", "--out", tmp_path)
    assert status == 2 and out.count("committed") == 0 and err.count("\n") == 1
    assert "'same' already exists" in err and "committed by another command while this one ran" in err
    record = read_record(tmp_path, "same")
    assert (record.shoes, record.seed) == (20, 6)
    rounds = pl.read_delta(str(tmp_path / "rounds")).filter(pl.col("run_id") == "same")
    assert rounds["shoe_id"].n_unique() == 20 and rounds.height == record.rounds
    assert main(["verify", "--out", str(tmp_path)]) == 0


BAD_SIMULATE_ARGUMENTS = [
    (["--shoes", "0", "--seed", "1"], "Invalid value for '--shoes'"),
    (["--shoes", "-5", "--seed", "1"], "Invalid value for '--shoes'"),
    (["--shoes", "ten", "--seed", "1"], "Invalid value for '--shoes'"),
    (["--shoes", str(10**30), "--seed", "1"], "Invalid value for '--shoes'"),
    (["--shoes", "10", "--seed", "1", "--partitions", str(10**7)], "Invalid value for '--partitions'"),
    (["--shoes", "10", "--seed", "-1"], "Invalid value for '--seed'"),
    (["--shoes", "10", "--seed", "1.5"], "Invalid value for '--seed'"),
    (["--shoes", "10", "--seed", str(2**64)], "Invalid value for '--seed'"),
    (["--shoes", "10"], "Missing option '--seed'"),
    (["--shoes", "10", "--seed", "1", "--rules", "mini_baccarat"], "unknown rule set 'mini_baccarat'"),
    (["--shoes", "10", "--seed", "1", "--partitions", "0"], "Invalid value for '--partitions'"),
    (["--shoes", "10", "--seed", "1", "--run-id", "../escape"], "run id '../escape' is not allowed"),
    (["--shoes", "10", "--seed", "1", "--run-id", "a/b"], "run id 'a/b' is not allowed"),
    (["--shoes", "10", "--seed", "1", "--run-id", "nul\x00byte"], "is not allowed"),
    (["--shoes", "10", "--seed", "1", "--run-id", "x" * 10_000], "is not allowed"),
    (["--shoes", "10", "--seed", "1", "--run-id", ".hidden"], "is not allowed"),
    (["--shoes", "10", "--seed", "1", "--run-id", ""], "run id '' is not allowed"),
    (["--shoes", "10", "--seed", "1", "--run-id", "base"], "already exists"),
    (["--shoes", "40", "--seed", "2", "--run-id", "base"], "with different parameters"),
]


@pytest.mark.parametrize(("args", "message"), BAD_SIMULATE_ARGUMENTS)
def test_bad_input_is_refused_in_one_line_and_leaves_data_untouched(committed, cli, args, message):
    folder = committed
    before = snapshot(folder)
    status, out, err = cli("simulate", "--out", folder, *args)
    assert status == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err
    assert snapshot(folder) == before


def test_output_path_that_is_a_file(cli, tmp_path):
    target = tmp_path / "a-file"
    target.write_text("keep me")
    status, _, err = cli("simulate", "--shoes", 5, "--seed", 1, "--out", target)
    assert status == 2 and f"output path {target} is a file" in err
    assert target.read_text() == "keep me"


def test_output_path_that_cannot_be_written(cli):
    status, _, err = cli("simulate", "--shoes", 5, "--seed", 1, "--out", "/proc/baccarat-data")
    # A local path that cannot be made is bad input (2), as for --warehouse, --page and -o; a store's refusal is 1.
    assert status == 2 and "output path /proc/baccarat-data is not writable" in err and err.count("\n") == 1


def test_plain_progress_starts_without_nan_ends_once_and_shows_small_speeds_on_stderr(capsys, monkeypatch):
    """On stderr: progress on stdout made `baccarat simulate ... | head -1` end the job at its first line."""
    from pipeline.cli import jobs

    now = [100.0]
    monkeypatch.setattr(jobs.time, "monotonic", lambda: now[0])
    reporter = jobs.Reporter("simulate r", 10, live=False)
    now[0] = 106.0
    reporter(0, 0)  # 6 s in, no shoe done yet
    now[0] = 112.0
    reporter(10, 812)
    reporter(10, 812)  # the driver reports once more after the last task
    reporter.close()
    printed = capsys.readouterr()
    lines = printed.err.splitlines()
    assert printed.out == "" and len(lines) == 2, lines
    assert lines[0] == "simulate r: 0/10 shoes, 0 rounds/s, starting"
    assert lines[1] == "simulate r: 10/10 shoes, 68 rounds/s, about 0 s left"


@pytest.mark.parametrize(("master", "message", "expected"), [
    ("nonsense", "unknown Spark master 'nonsense'", 2),
    ("spark://nohost", "expected spark://HOST:PORT", 2),
    ("spark://127.0.0.1:7", "cannot reach the Spark master spark://127.0.0.1:7", 1),  # the world, not the input
])
def test_a_bad_or_unreachable_master_is_one_line_quickly(cli, tmp_path, master, message, expected):
    started = time.monotonic()
    status, out, err = cli("simulate", "--shoes", 5, "--seed", 1, "--out", tmp_path / "data", "--master", master)
    assert status == expected and out == "" and err.count("\n") == 1 and message in err, err
    assert time.monotonic() - started < 10  # Spark alone waits about a minute, then prints 200 lines


def test_no_java_is_one_line_that_says_what_to_install(tmp_path):
    """A newcomer without Java: no java on PATH and no JAVA_HOME."""
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "PYSPARK_GATEWAY_PORT")}
    env["PATH"] = str(tmp_path / "empty")
    done = subprocess.run([sys.executable, "-m", "pipeline.cli", "simulate", "--shoes", "5", "--seed", "1",
                           "--out", str(tmp_path / "data")], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Spark needs Java 17 or later" in done.stderr, done.stderr


def baccarat_simulate(tmp_path, master: str = "local[1]", **env_changes: str | None) -> subprocess.CompletedProcess:
    """A tiny `baccarat simulate` in a process (and JVM) of its own, its Spark log folder tmp_path/logs,
    its environment changed by `env_changes` (None removes a variable)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_GATEWAY_")}
    env["BACCARAT_LOG_DIR"] = str(tmp_path / "logs")
    for name, value in env_changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return subprocess.run([sys.executable, "-m", "pipeline.cli", "simulate", "--shoes", "2", "--seed", "1",
                           "--master", master, "--out", str(tmp_path / "data")],
                          env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.slow  # a whole `baccarat simulate` whose driver (and JVM) is its own (docs/testing.md)
def test_a_plain_simulate_prints_nothing_on_stderr_and_keeps_spark_s_output_in_a_log_file(tmp_path):
    done = baccarat_simulate(tmp_path, BACCARAT_SPARK_LOG_LEVEL=None)
    assert done.returncode == 0 and "committed run" in done.stdout, done.stderr[-2000:]
    assert without_progress(done.stderr) == ""
    [log] = (tmp_path / "logs").iterdir()
    assert log.name.startswith("spark-") and "jdk.incubator.vector" in log.read_text()  # the JVM's own note


@pytest.mark.slow  # a whole `baccarat simulate` whose driver (and JVM) is its own (docs/testing.md)
def test_baccarat_spark_log_level_brings_spark_s_lines_back_on_stderr(tmp_path):
    done = baccarat_simulate(tmp_path, BACCARAT_SPARK_LOG_LEVEL="info")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "jdk.incubator.vector" in done.stderr and " INFO SparkContext: Running Spark version" in done.stderr
    assert " INFO Executor: " in done.stderr  # the whole run at INFO, not only its start
    assert not (tmp_path / "logs").exists()


@pytest.mark.parametrize(("env_changes", "message"), [
    ({"BACCARAT_SPARK_LOG_LEVEL": "loud"}, "BACCARAT_SPARK_LOG_LEVEL 'loud' is not a log level (OFF, FATAL, ERROR"),
    ({"BACCARAT_LOG_DIR": "/proc/baccarat-logs"}, "cannot write Spark's log in /proc/baccarat-logs: "),
])
def test_a_spark_log_that_cannot_be_had_is_one_line_before_spark_starts(tmp_path, env_changes, message):
    done = baccarat_simulate(tmp_path, **env_changes)
    assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1, done.stderr[-2000:]
    assert done.stderr.startswith("error: ") and message in done.stderr, done.stderr


def test_a_jvm_that_stops_as_it_starts_is_one_line_naming_the_log_that_holds_its_output(tmp_path):
    java = tmp_path / "java" / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text("#!/bin/sh\necho 'fake java: this JVM cannot start' >&2\nexit 1\n")
    java.chmod(0o755)
    done = baccarat_simulate(tmp_path, JAVA_HOME=str(tmp_path / "java"))
    assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1, done.stderr[-2000:]
    [log] = (tmp_path / "logs").iterdir()
    assert done.stderr == f"error: Spark's JVM stopped as it started: its output is in {log}\n"
    assert "fake java: this JVM cannot start" in log.read_text()


@pytest.mark.slow  # a whole `baccarat simulate` whose driver (and JVM) is its own (docs/testing.md)
@pytest.mark.parametrize(("setting", "master", "status", "said"), [
    ("spark.scheduler.mode BANANA", "local[1]", 2,
     "Spark refused its settings: [INVALID_CONF_VALUE.OUT_OF_RANGE_OF_OPTIONS] The value 'BANANA' in the config "
     '"spark.scheduler.mode" is invalid.'),
    ("", "k8s://https://127.0.0.1:1", 1,
     "Spark did not start on k8s://https://127.0.0.1:1: KubernetesClientException: An error has occurred."),
], ids=["a setting spark refuses", "a master that refuses the connection"])
def test_a_driver_that_did_not_start_printed_a_py4j_traceback(tmp_path, setting, master, status, said):
    """A Py4JJavaError as the SparkContext started (spark-defaults.conf's `spark.scheduler.mode BANANA`, a
    k8s:// master that refuses the connection) ended the command in some 80 lines of traceback, exit 1."""
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "spark-defaults.conf").write_text(setting + "\n")
    done = baccarat_simulate(tmp_path, SPARK_CONF_DIR=str(tmp_path / "conf"), master=master)
    assert done.returncode == status and done.stdout == "" and done.stderr.count("\n") == 1, done.stderr[-2000:]
    assert done.stderr.startswith(f"error: {said}"), done.stderr
    assert status == 2 or done.stderr.endswith(f"; its output is in {next((tmp_path / 'logs').iterdir())}\n")


def test_the_overwrite_named_a_marts_command_without_the_out_it_was_given(committed, cli):
    """'run `baccarat marts --run-id base`' built the marts of ./data, not of the --out overwritten."""
    folder = committed
    status, out, err = cli("simulate", "--shoes", 30, "--seed", 2, "--out", folder, "--run-id", "base", "--overwrite")
    assert status == 0, err
    assert f"are removed: until `baccarat marts --run-id base --out {folder}` builds the new run's" in out
    assert cli("marts", "--run-id", "base", "--out", folder)[0] == 0


def test_after_an_overwrite_the_warehouse_showed_no_rows_of_the_run_and_nothing_said_why(committed, cli):
    """After `simulate --overwrite` of a run with marts, the warehouse's rounds view held 0 rows of it
    until `baccarat marts`, and `baccarat runs` listed the run as any other. It says the run has no marts,
    that the warehouse leaves it out, and the command that builds them; after it, that they are built."""
    import json

    folder = committed
    assert cli("marts", "--out", folder)[0] == 0
    assert "built" in cli("runs", "--out", folder)[1].splitlines()[2].split()
    status, out, err = cli("simulate", "--shoes", 30, "--seed", 2, "--out", folder, "--run-id", "base", "--overwrite")
    assert status == 0 and "the warehouse leaves the run out (its rounds and shoes views too)" in out, err
    status, out, err = cli("runs", "--out", folder)
    assert (status, err) == (0, "") and "none" in out.splitlines()[2].split()
    assert out.splitlines()[3:] == [
        "run 'base' has no marts (not built yet, or removed by `simulate --overwrite`): the warehouse leaves it out, "
        f"its rounds and shoes too, until `baccarat marts --run-id base --out {folder}`"]
    assert json.loads(cli("runs", "--out", folder, "--json")[1])["marts"] is False
    assert cli("marts", "--run-id", "base", "--out", folder)[0] == 0
    status, out, _ = cli("runs", "--out", folder)
    assert "built" in out.splitlines()[2].split() and len(out.splitlines()) == 3
    assert json.loads(cli("runs", "--out", folder, "--json")[1])["marts"] is True


def test_an_overwrite_leaves_the_warehouse_correct(committed, cli):
    """The replaced run's marts go and the warehouse is published again: no old figures, no view naming
    files of the old run (the warehouse holds the runs that have marts); `baccarat marts` then builds
    the new run's."""
    import duckdb

    folder = committed
    assert cli("marts", "--out", folder)[0] == 0
    status, out, err = cli("simulate", "--shoes", 30, "--seed", 2, "--out", folder, "--run-id", "base", "--overwrite")
    assert status == 0 and "marts of the replaced run 'base' are removed" in out and "published" in out, err
    new = read_record(folder, "base")
    with duckdb.connect(str(folder / "warehouse.duckdb"), read_only=True) as con:
        con.execute(f"SET file_search_path = '{folder}'")  # the views name their files relative to the folder
        assert con.execute("SELECT count(*) FROM outcome_summary").fetchone()[0] == 0
        assert con.execute("SELECT count(*) FROM rounds WHERE run_id = 'base'").fetchone()[0] == 0
    assert cli("marts", "--out", folder)[0] == 0
    with duckdb.connect(str(folder / "warehouse.duckdb"), read_only=True) as con:
        con.execute(f"SET file_search_path = '{folder}'")
        assert con.execute("SELECT sum(count) FROM outcome_summary").fetchone()[0] == new.rounds
        assert con.execute("SELECT count(*) FROM rounds WHERE run_id = 'base'").fetchone()[0] == new.rounds


# Lines logged as errors through one of Spark's loggers by a JVM that reads the shipped log configuration, as
# the README's spark-submit and `baccarat` start their drivers.
LOG_AS_SPARK = """
import sys
from pyspark import SparkConf
from pyspark.java_gateway import launch_gateway
gateway = launch_gateway(SparkConf().set("spark.driver.extraJavaOptions", "-Dlog4j2.configurationFile=" + sys.argv[1]))
logger = gateway.jvm.org.apache.logging.log4j.LogManager.getLogger(sys.argv[2])
for line in sys.argv[3:]:
    logger.error(line)
gateway.shutdown()
"""


def logged_errors(logger: str, lines: list[str]) -> list[str]:
    """Which of `lines`, logged as errors through `logger`, reach the driver's terminal."""
    settings = Path(__file__).parents[2] / "conf" / "spark" / "log4j2.properties"
    done = subprocess.run([sys.executable, "-c", LOG_AS_SPARK, str(settings), logger, *lines],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    marker = f" ERROR {logger.rsplit('.', 1)[1]}: "
    return [line.split(marker)[1] for line in done.stderr.splitlines() if marker in line]


def test_an_executor_told_to_stop_at_the_end_is_not_logged_as_an_error_of_a_successful_job():
    """A cluster job that succeeded printed `ERROR TaskSchedulerImpl: Lost executor 1 on 127.0.0.1: Command
    exited with code 0` when the executor's clean exit reached the driver before the driver's own stop."""
    lines = ["Lost executor 1 on 127.0.0.1: Command exited with code 0",
             "Lost executor 2 on 127.0.0.1: Command exited with code 1",
             "Lost executor 3 on 10.0.0.7: worker lost",
             "Lost executor 4 on 127.0.0.1: Command exited with code 0 after a crash of its own"]
    assert logged_errors("org.apache.spark.scheduler.TaskSchedulerImpl", lines) == lines[1:]


def test_a_message_to_an_ended_application_is_not_logged_as_an_error_of_a_successful_job():
    """A cluster job that succeeded printed `ERROR TransportRequestHandler: Error while invoking
    RpcHandler#receive() for one-way message from ...` and a stack trace ("Could not find AppClient") when the
    master's last update reached the driver after its application client had stopped."""
    lines = ["Error while invoking RpcHandler#receive() for one-way message from 127.0.0.1/127.0.0.1:39439.",
             "Error while invoking RpcHandler#receive() on RPC id 8120437345961325406",
             "Error sending result StreamResponse[streamId=/jars/x.jar] to /127.0.0.1:40000; closing connection"]
    assert logged_errors("org.apache.spark.network.server.TransportRequestHandler", lines) == lines[1:]
