"""The marts built from shoe ranges as Spark tasks (pipeline/marts/cluster.py, partials.py) against the
single-process build of the same engine: every mart, same columns and rows in the same order, decimals
equal, floats within 1e-9 relative; with 1, 3 and 7 ranges on the suite's local[2] session, on runs of
four rule sets (ez baccarat with round_ev rows, so with its composition marts)."""

import os
import re
import shutil
import signal
import socket
from pathlib import Path
import subprocess
import time

import polars as pl
import pytest
from polars.testing import assert_frame_equal
from spark_jobs import built_tables, simulate
from test_cluster import QUIET_DRIVER, SPARK_HOME, standalone_cluster, wait_for
from test_faults import baccarat_command, environment, injected

import pipeline.spark_master
from pipeline.spark import QUICK_JVM
from pipeline.composition import job as composition_job
from pipeline.jobs import run_job
from pipeline.marts.cluster import spark_ranges
from pipeline.marts.engines import Engine, build_marts
from pipeline.marts.inputs import COMPOSITION_MARTS, MARTS, load_run
from pipeline.marts.marts_duckdb import partials
from pipeline.marts import composition_duckdb, composition_polars
from pipeline.marts.partials import COMPOSITION_MERGED, MERGED, ShoeRange, merge, plan_ranges
from pipeline.marts.range_views import range_connection
from pipeline.schemas import contract
from pipeline.storage import Store

JOB = Path(__file__).parents[2] / "jobs" / "marts.py"
# (rules, seed, shoes, partitions, road_stats_shoes): rounds files fewer than 7 ranges, so ranges cut
# files by shoe; road statistics over every shoe (0) or the first 70.
RUNS = [("punto_banco", 41, 150, 3, 0), ("super_six", 42, 120, 2, 70), ("ez_baccarat", 43, 130, 3, 0),
        ("chemin_de_fer", 44, 120, 3, 0)]
ROUND_EV_SHOES = 100  # ez baccarat: round_ev rows for its first shoes (`baccarat composition --shoes`), in 3+ ranges
ROAD_CELLS_SHOES = 40


@pytest.fixture(scope="module")
def runs(spark, tmp_path_factory):
    """{rules: (run, road_stats_shoes)}, committed in one folder."""
    out = tmp_path_factory.mktemp("cluster_runs")
    store, runs = Store.parse(str(out)), {}
    for rules, seed, shoes, partitions, road_stats_shoes in RUNS:
        record = simulate(spark, out, rules=rules, seed=seed, shoes=shoes, partitions=partitions)
        if rules == "ez_baccarat":
            run_job(spark, composition_job.plan_for(store, record.run_id, ROUND_EV_SHOES, None, partitions=2))
        runs[rules] = (load_run(store, record.run_id), road_stats_shoes)
    return runs


@pytest.fixture(scope="module")
def one_process(runs):
    """The single-process build of a run with an engine, built once: one(rules, engine)."""
    built = {}

    def one(rules: str, engine: Engine):
        if (rules, engine) not in built:
            run, road_stats_shoes = runs[rules]
            built[rules, engine] = built_tables(run.out, build_marts(engine, run, ROAD_CELLS_SHOES, road_stats_shoes))
        return built[rules, engine]

    return one


def assert_same_marts(built: dict, expected: dict) -> None:
    assert set(built) == set(expected)
    for name, table in expected.items():
        assert built[name].schema == table.schema, name
        assert built[name].num_rows == table.num_rows, name
        assert_frame_equal(pl.from_arrow(built[name]), pl.from_arrow(table), rel_tol=1e-9)


@pytest.mark.parametrize("ranges", [1, 3, 7])
@pytest.mark.parametrize("engine", list(Engine))
@pytest.mark.parametrize("rules", [rules for rules, *_ in RUNS])
def test_marts_from_spark_ranges_equal_the_single_process_build(spark, runs, one_process, rules, engine, ranges):
    run, road_stats_shoes = runs[rules]
    built = built_tables(run.out, build_marts(engine, run, ROAD_CELLS_SHOES, road_stats_shoes, ranges,
                                              spark_ranges(spark, run.out)))
    expected = one_process(rules, engine)
    assert set(expected) == set(MARTS) | (set(COMPOSITION_MARTS) if rules == "ez_baccarat" else set())
    assert all(table.num_rows > 0 for table in expected.values())
    assert_same_marts(built, expected)


def test_each_range_task_runs_its_engines_on_the_task_cores(spark, tmp_path):
    """local[2] runs two one-core tasks at once: each task's DuckDB connection and Polars pool have one
    thread (spark.task.cpus), not one per core of the host."""
    assert int(spark.getConf().get("spark.task.cpus", "1")) == 1 < (os.cpu_count() or 1)
    store = Store.parse(str(tmp_path))

    def engine_threads(shoes):
        import polars

        with range_connection(store, shoes) as con:
            [(duckdb_threads,)] = con.execute("SELECT current_setting('threads')").fetchall()
        return {"duckdb": int(duckdb_threads), "polars": polars.thread_pool_size()}

    ranges = [ShoeRange(first, first + 1, (), ()) for first in range(4)]
    assert spark_ranges(spark, store)(engine_threads, ranges) == [{"duckdb": 1, "polars": 1}] * 4


def test_the_tasks_polars_keeps_the_pages_it_frees(spark):
    """pipeline/allocator.py, through the executors' environment (pipeline/spark.py): a query over 20M
    integers run again a second and a half after the same query twice faults no new pages in
    (tests/unit/test_allocator.py shows that Polars' own setting does)."""

    def page_faults_of_a_second_query(_):
        import resource
        import time

        import polars as pl

        def page_faults():
            before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            pl.DataFrame({"a": pl.int_range(0, 20_000_000, eager=True)}).select(pl.col("a") * 2).sum()
            return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

        first = page_faults()
        page_faults()
        time.sleep(1.5)
        return first, page_faults()

    for first, second in spark.parallelize([0, 1], 2).map(page_faults_of_a_second_query).collect():
        assert second < first / 10, (first, second)


def test_the_tasks_python_workers_import_the_installed_pyspark(spark):
    """Spark puts its zipped pyspark first on the workers' path, which Python compiles afresh in every
    daemon; the daemon of pipeline/spark_daemon.py imports the installed one, as the driver does."""
    import pyspark

    def imported(_):
        import pyspark

        return pyspark.__file__

    assert spark.parallelize([0, 1], 2).map(imported).collect() == [pyspark.__file__] * 2


def test_sessions_straddling_two_ranges_are_completed_by_the_merge(runs):
    """A range sends its 100- and 1,000-round sessions that lie wholly inside it as a histogram and the
    blocks across its edges; merged, the blocks that straddle two ranges complete every session but the
    run's last."""
    run, road_stats_shoes = runs["punto_banco"]
    ranges = plan_ranges(run, 7)
    assert len(ranges) == 7 and ranges[0].first == 0 and ranges[-1].last == run.record.shoes
    results = [partials(run, shoes, ROAD_CELLS_SHOES, road_stats_shoes) for shoes in ranges]
    edges = merge(MERGED["session_edges"], [result["session_edges"] for result in results])
    assert sum(result["session_edges"].num_rows for result in results) > edges.num_rows  # some were in two ranges
    inside = pl.from_arrow(merge(MERGED["sessions"], [result["sessions"] for result in results]))
    for size in (100, 1000):
        completed = pl.from_arrow(edges).filter(size=size, rounds=size).height
        whole = inside.filter(horizon=f"session_{size}", bet="banker")["sessions"].sum()
        assert completed > 0 and whole + completed == run.record.rounds // size


@pytest.mark.parametrize("engine", list(Engine))
def test_composition_partials_of_several_ranges_merge_by_key(runs, engine):
    """ez baccarat's round_ev rows lie in three of its ranges: each range's count levels and EV groups
    are partial sums, and so are the perfect-play sums of each bet: fewer rows once merged."""
    run, _ = runs["ez_baccarat"]
    chosen = composition_duckdb if engine is Engine.duckdb else composition_polars
    round_ev = tuple(run.added_files("round_ev"))
    results = [chosen.partials(run, shoes, round_ev) for shoes in plan_ranges(run, 3)]
    assert all(result["perfect_bets"].num_rows > 0 for result in results)
    for name, merging in COMPOSITION_MERGED.items():
        merged = merge(merging, [result[name] for result in results])
        assert merged.num_rows < sum(result[name].num_rows for result in results), name
    bets = merge(COMPOSITION_MERGED["perfect_bets"], [result["perfect_bets"] for result in results])
    assert set(bets["shoes"].to_pylist()) == {ROUND_EV_SHOES}


def test_the_command_on_spark_commits_the_marts_of_the_single_process_command(cli, runs, tmp_path):
    run, _ = runs["super_six"]
    single, spread = tmp_path / "single", tmp_path / "spread"
    for folder in (single, spread):
        shutil.copytree(run.out.local_path(), folder)
    assert cli("marts", "--out", single, "--run-id", run.run_id)[0] == 0
    status, printed, err = cli("marts", "--out", spread, "--run-id", run.run_id, "--master", "local[2]",
                               "--ranges", "5")
    assert status == 0 and err == "" and "on 5 Spark tasks" in printed
    on_spark = committed_marts(str(spread), run.run_id)
    for name, expected in committed_marts(str(single), run.run_id).items():
        assert expected.height > 0
        assert_frame_equal(on_spark[name], expected, rel_tol=1e-9)


def listing(folder) -> list[str]:
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*"))


@pytest.mark.parametrize(("args", "message"), [
    (["--run-id", "nope", "--master", "local[2]"], "unknown run id 'nope'"),
    (["--engine", "spark", "--master", "local[2]"], "Invalid value for '--engine'"),
    (["--ranges", "0", "--master", "local[2]"], "Invalid value for '--ranges'"),
    (["--ranges", "1000001", "--master", "local[2]"], "Invalid value for '--ranges'"),
    (["--master", "spark://nohost"], "expected spark://HOST:PORT"),
])
def test_bad_marts_on_spark_arguments_are_one_line_and_write_nothing(cli, runs, tmp_path, args, message):
    folder = tmp_path / "out"
    shutil.copytree(runs["punto_banco"][0].out.local_path(), folder)
    before = listing(folder)
    status, printed, err = cli("marts", "--out", folder, *args)
    assert status == 2 and printed == "" and message in err and err.count("\n") == 1
    assert listing(folder) == before


def test_an_unreachable_master_is_a_failure_of_the_world_and_writes_nothing(cli, runs, tmp_path):
    folder = tmp_path / "out"
    shutil.copytree(runs["punto_banco"][0].out.local_path(), folder)
    before = listing(folder)
    status, printed, err = cli("marts", "--out", folder, "--master", "spark://127.0.0.1:1")
    assert status == 1 and printed == "" and err.count("\n") == 1
    assert "cannot reach the Spark master spark://127.0.0.1:1" in err and listing(folder) == before


@pytest.mark.parametrize("command", [["marts"], ["simulate", "--shoes", "5", "--seed", "1"]], ids=["marts", "simulate"])
def test_a_master_that_accepts_connections_but_is_no_spark_master_is_one_line_not_a_hang(
        cli, runs, tmp_path, command, monkeypatch):
    """A port whose connections the kernel accepts and nothing answers: Spark itself would wait 80-100 s
    for its registration, then print a Java trace. The bound is a hang guard, not a speed test: the check
    itself takes its connect timeout, shortened here (nothing on the port ever answers, however long)."""
    monkeypatch.setattr(pipeline.spark_master, "MASTER_CONNECT_SECONDS", 1)
    folder = tmp_path / "out"
    shutil.copytree(runs["punto_banco"][0].out.local_path(), folder)
    before = listing(folder)
    with socket.create_server(("127.0.0.1", 0)) as silent:
        master = f"spark://127.0.0.1:{silent.getsockname()[1]}"
        started = time.monotonic()
        status, printed, err = cli(*command, "--out", folder, "--master", master)
        seconds = time.monotonic() - started
    assert status == 2 and printed == "" and err.count("\n") == 1
    assert f"{master} is not a Spark master" in err and seconds < 60
    assert listing(folder) == before


def test_a_missing_file_is_found_before_any_task_runs(cli, runs, tmp_path):
    folder = tmp_path / "out"
    run = runs["chemin_de_fer"][0]
    shutil.copytree(run.out.local_path(), folder)
    missing = folder / run.record.files_of("rounds")[1].path
    missing.unlink()
    before = listing(folder)
    status, printed, err = cli("marts", "--out", folder, "--run-id", run.run_id, "--master", "local[2]")
    assert status == 1 and printed == "" and err.count("\n") == 1
    assert "data file missing" in err and str(missing) in err
    assert listing(folder) == before


def test_on_spark_the_task_reading_a_local_file_finds_it_fails_its_checksum_and_nothing_is_committed(
        cli, runs, tmp_path, monkeypatch):
    """A rounds file replaced by one of the same size (a byte changed mid-file) in a local folder: the
    driver hashes nothing (no one machine reads every byte of a run before the tasks), the range task
    that reads the file finds it, and the command ends in one line naming it, exit 1, nothing written."""
    folder = tmp_path / "out"
    run = runs["punto_banco"][0]
    shutil.copytree(run.out.local_path(), folder)
    damaged = folder / run.record.files_of("rounds")[1].path
    data = bytearray(damaged.read_bytes())
    data[len(data) // 2] ^= 1
    damaged.write_bytes(bytes(data))
    before = listing(folder)
    monkeypatch.setattr(Store, "sha256", lambda self, relative: pytest.fail(f"the driver hashed {relative}"))
    status, printed, err = cli("marts", "--out", folder, "--run-id", run.run_id, "--master", "local[2]")
    assert (status, printed) == (1, ""), err
    assert err.count("\n") == 1 and "fails its checksum" in err and str(damaged) in err, err
    assert listing(folder) == before


def committed_marts(out: str, run_id: str) -> dict[str, pl.DataFrame]:
    return {name: pl.from_arrow(Store.parse(out).read_rows(contract(name).table, [run_id])).sort(pl.all())
            for name in MARTS}


@pytest.mark.slow
def test_marts_submitted_to_a_standalone_cluster_from_a_bucket_equal_the_single_process_command(
        spark, cli, tmp_path, bucket):
    """A master and two one-core workers build the marts of a run in a bucket of the local S3 server
    (jobs/marts.py through spark-submit); then the command without Spark builds them again in place."""
    run = simulate(spark, bucket, rules="super_six", seed=52, shoes=300, partitions=4)
    (tmp_path / "logs").mkdir()
    with standalone_cluster(tmp_path / "logs", 2) as (url, env, _):
        submitted = subprocess.run(
            [str(SPARK_HOME / "bin" / "spark-submit"), "--master", url, *QUIET_DRIVER, str(JOB), "--out", bucket,
             "--run-id", run.run_id, "--ranges", "5", "--warehouse", str(tmp_path / "cluster.duckdb")],
            env=env, capture_output=True, text=True, timeout=600)
    assert submitted.returncode == 0, submitted.stderr[-3000:]
    assert f"marts of run {run.run_id!r}" in submitted.stdout and "on 5 Spark tasks" in submitted.stdout
    on_cluster = committed_marts(bucket, run.run_id)
    assert cli("marts", "--out", bucket, "--run-id", run.run_id, "--warehouse", tmp_path / "one.duckdb")[0] == 0
    for name, expected in committed_marts(bucket, run.run_id).items():
        assert expected.height > 0
        assert_frame_equal(on_cluster[name], expected, rel_tol=1e-9)


@pytest.mark.slow
def test_marts_tasks_failing_their_first_attempt_are_retried_to_the_marts_of_one_process(cli, runs, tmp_path):
    """The test seam's marts-first-attempt fault: every range's task raises on its attempt 0; local[2,2]
    allows each task one retry."""
    run = runs["punto_banco"][0]
    single, spread, logs = tmp_path / "single", tmp_path / "spread", tmp_path / "logs"
    for folder in (single, spread):
        shutil.copytree(run.out.local_path(), folder)
    command = baccarat_command("marts", "--out", spread, "--run-id", run.run_id, "--master", "local[2,2]", "--ranges", 3)
    done = subprocess.run(command, env=environment(BACCARAT_LOG_DIR=str(logs), **injected("marts-first-attempt")),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and done.stderr == "", done.stderr[-3000:]
    [log] = logs.iterdir()
    assert set(re.findall(r"injected fault: first attempt of the marts task for shoes (\d+-\d+)", log.read_text())) == {
        "0-49", "50-99", "100-149"}
    assert cli("marts", "--out", single, "--run-id", run.run_id)[0] == 0
    on_spark = committed_marts(str(spread), run.run_id)
    for name, expected in committed_marts(str(single), run.run_id).items():
        assert_frame_equal(on_spark[name], expected, rel_tol=1e-9)


@pytest.mark.slow
def test_two_marts_builds_on_spark_at_once_commit_one_copy_of_each_marts_rows(cli, runs, tmp_path):
    """Two `marts --master` commands (two drivers) build the same run into the same folder at once."""
    run = runs["chemin_de_fer"][0]
    single, shared, logs = tmp_path / "single", tmp_path / "shared", tmp_path / "logs"
    for folder in (single, shared):
        shutil.copytree(run.out.local_path(), folder)
    command = baccarat_command("marts", "--out", shared, "--run-id", run.run_id, "--master", "local[1]", "--ranges", 3)
    builds = [subprocess.Popen(command, env=environment(BACCARAT_LOG_DIR=str(logs)), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True) for _ in range(2)]
    done = [build.communicate(timeout=600) + (build.returncode,) for build in builds]
    assert [status for *_, status in done] == [0, 0], [err[-2000:] for _, err, _ in done]
    assert cli("marts", "--out", single, "--run-id", run.run_id)[0] == 0
    both = committed_marts(str(shared), run.run_id)
    for name, expected in committed_marts(str(single), run.run_id).items():
        assert expected.height > 0
        assert_frame_equal(both[name], expected, rel_tol=1e-9)


@pytest.mark.slow
def test_a_worker_killed_mid_build_leaves_the_marts_of_one_process(cli, runs, tmp_path, monkeypatch):
    """A master and two one-core workers; the test seam's marts-gated fault holds every task until the
    test opens the gate, after it has killed one worker (its executor and Python workers) while each
    worker runs a task: Spark runs the lost task again on the other worker."""
    run = runs["chemin_de_fer"][0]
    single, spread, gate, logs = (tmp_path / name for name in ("single", "spread", "gate", "logs"))
    for folder in (single, spread):
        shutil.copytree(run.out.local_path(), folder)
    gate.mkdir()
    logs.mkdir()
    for name, value in (injected("marts-gated") | {"BACCARAT_TEST_GATE": str(gate)}).items():
        monkeypatch.setenv(name, value)  # the workers' environment, and so their executors'
    with standalone_cluster(logs, 2) as (url, _, processes):
        command = baccarat_command("marts", "--out", spread, "--run-id", run.run_id, "--master", url, "--ranges", 4)
        build = subprocess.Popen(command, env=environment(BACCARAT_LOG_DIR=str(logs)), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        wait_for(lambda: len(list(gate.glob("started-*"))) == 2, "a task on each worker", 300)
        os.killpg(processes["worker2"].pid, signal.SIGKILL)
        assert processes["worker2"].wait(timeout=30) != 0
        (gate / "open").touch()
        printed, err = build.communicate(timeout=600)
    assert build.returncode == 0 and err == "", err[-3000:]
    assert "on 4 Spark tasks" in printed
    attempts = sorted(path.name for path in gate.glob("started-*"))
    assert len(attempts) == 5 and sum(name.endswith("-1") for name in attempts) == 1, attempts
    executors = [path.read_text().split("\n", 1)[0] for path in logs.glob("work*/app-*/*/stderr")]
    assert len(executors) >= 2 and all(f'"{flag}"' in executor for flag in QUICK_JVM.split() for executor in executors)
    assert cli("marts", "--out", single, "--run-id", run.run_id)[0] == 0
    on_cluster = committed_marts(str(spread), run.run_id)
    for name, expected in committed_marts(str(single), run.run_id).items():
        assert expected.height > 0
        assert_frame_equal(on_cluster[name], expected, rel_tol=1e-9)


def test_more_ranges_than_shoes_reports_the_spark_tasks_that_ran(spark, cli, tmp_path):
    simulate(spark, tmp_path, seed=44, shoes=3, partitions=1, run_id="three")
    status, printed, err = cli("marts", "--out", tmp_path, "--run-id", "three", "--master", "local[2]",
                               "--ranges", "1000000")
    assert status == 0 and err == "", err
    assert "on 3 Spark tasks" in printed
