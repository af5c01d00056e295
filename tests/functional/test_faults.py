"""Faults really injected into `baccarat simulate` and `baccarat marts`: a task that fails on its first
attempt, the driver killed with SIGKILL in the middle of writing, runs and mart builds racing on the
same OUT, an overwrite that fails half-way, a disk that fills up, a commit that cannot be written.
Whatever happens, a run is either committed whole, once, or invisible to every reader; on a local
folder and in a bucket alike (the disk-full and blocked-folder faults exist only on a local disk)."""

import errno
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest
from cli_process import without_progress
from spark_jobs import one_process_ranges, simulate
from deltalake import DeltaTable

from pipeline.marts.inputs import MARTS, load_run
from pipeline.marts.publish import PER_SHOE_MARTS, publish_warehouse
from pipeline.jobs import JobFailed, already_committed, run_job
from pipeline.processes import descendants, running
from pipeline.rule_sets import load_rule_set
from pipeline.runs import RunRecord, check_run, committed_runs, read_run
from pipeline.schemas import contract
from pipeline.simulate import job
from pipeline.storage import WAREHOUSE, Store

TIMEOUT = 300  # seconds; a subprocess that hangs fails the test instead of the suite
SEAMS = Path(__file__).parents[1] / "seams"  # the test-only faults (tests/seams/sitecustomize.py)


def baccarat_command(*args) -> list[str]:
    return [sys.executable, "-m", "pipeline.cli", *(str(a) for a in args)]


def injected(fault: str) -> dict:
    """The environment of a `baccarat` whose tasks meet `fault` (see tests/seams/sitecustomize.py)."""
    return {"BACCARAT_TEST_FAULT": fault, "PYTHONPATH": os.pathsep.join(filter(None, [
        str(SEAMS), os.environ.get("PYTHONPATH")]))}


def environment(**extra: str) -> dict:
    """This environment (with the suite's AWS_* settings of the S3 server) for a separate driver and
    JVM: never the suite's own Spark gateway."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_GATEWAY_")}
    return env | {"PYSPARK_PYTHON": sys.executable} | extra


@pytest.fixture
def baccarat():
    """start(ARGS..., cwd=, **env): `baccarat ARGS...` in its own process (and JVM: the suite's session
    is local[2] and cannot change master), in a new session, so that its process group holds the
    driver and its JVM. A test that fails early leaves none of them running."""
    started: list[subprocess.Popen] = []

    def start(*args, cwd: Path, **extra_env: str) -> subprocess.Popen:
        process = subprocess.Popen(baccarat_command(*args), cwd=cwd, env=environment(**extra_env), text=True,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        started.append(process)
        return process

    yield start
    for process in started:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()


def finish(process: subprocess.Popen) -> tuple[int, str, str]:
    try:
        out, err = process.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        pytest.fail(f"baccarat did not finish in {TIMEOUT} s:\n{err[-3000:]}")
    return process.returncode, out, without_progress(err)


# ------------------------------------------------------------------ what the stores hold


def read_record(out, run_id: str) -> RunRecord | None:
    """The run's record, from its row in `runs`."""
    return read_run(Store.parse(str(out)), run_id)


def checksums(out, run_id: str) -> dict[str, str]:
    record = read_record(out, run_id)
    assert record is not None, f"no runs row of {run_id!r} in {out}"
    return {f.path: f.sha256 for f in record.files}


def run_files(out: Path, run_id: str) -> list[Path]:
    """Everything on a local disk in the run's data folders, temporaries included."""
    return sorted(p for table in ("rounds", "shoes") for p in (out / table / f"run_id={run_id}").glob("*"))


def listing(out, table: str, run_id: str) -> list[str]:
    """Every file (object) in a run's folder of a table, committed or not, temporaries included, as
    paths under OUT: what the store holds, seen by listing it (a local folder or a bucket prefix)."""
    store = Store.parse(str(out))
    found = store.filesystem.get_file_info(
        pafs.FileSelector(store.fs_path(table, f"run_id={run_id}"), allow_not_found=True))
    return sorted(f"{table}/run_id={run_id}/{info.base_name}" for info in found if info.type == pafs.FileType.File)


def temporaries(paths) -> list[str]:
    names = [Path(str(p)).name for p in paths]
    return [n for n in names if n.startswith(".part-") or n.endswith(".tmp") or ".tmp-" in n]


def generic_delta(out, table: str) -> DeltaTable | None:
    """The table as a generic Delta reader (deltalake, not the pipeline) opens it; None if it does not exist."""
    store = Store.parse(str(out))
    location = store.location(table)
    if not DeltaTable.is_deltatable(location, storage_options=store.storage_options):
        return None
    return DeltaTable(location, storage_options=store.storage_options)


def delta_rows(out, run_id: str, table: str = "rounds") -> int:
    """The rows of a run that a generic Delta reader sees in a table (0 when the table does not exist)."""
    delta = generic_delta(out, table)
    if delta is None:
        return 0
    return delta.to_pyarrow_table(filters=[("run_id", "=", run_id)], columns=["run_id"]).num_rows


def snapshot_files(out, table: str, run_id: str) -> list[str]:
    """The files of a run in the table's current Delta snapshot (its add actions), as paths under OUT."""
    delta = generic_delta(out, table)
    if delta is None:
        return []
    actions = pa.table(delta.get_add_actions(flatten=True)).to_pylist()
    return sorted(f"{table}/{a['path']}" for a in actions if a["partition.run_id"] == run_id)


def assert_committed_once(out, record: RunRecord) -> None:
    """The run's rows are in rounds and shoes exactly once, as a generic Delta reader sees them: the
    snapshot holds the files its runs row lists and no others, and `runs` holds one row of it."""
    run_id = record.run_id
    assert delta_rows(out, run_id, "rounds") == record.rounds
    assert delta_rows(out, run_id, "shoes") == record.shoes
    assert delta_rows(out, run_id, "runs") == 1
    for table in ("rounds", "shoes"):
        assert snapshot_files(out, table, run_id) == sorted(f.path for f in record.files_of(table))
    check_run(Store.parse(str(out)), record)


def assert_nothing_visible(out, run_id: str, cli, tmp_path: Path) -> None:
    store = Store.parse(str(out))
    assert read_record(out, run_id) is None
    assert committed_runs(store) == []
    warehouse = tmp_path / "nothing-visible.duckdb"
    status, _, err = cli("marts", "--out", out, "--warehouse", warehouse)
    assert status == 2 and f"error: no committed run in {store}" in err and err.count("\n") == 1, err
    for table in ("rounds", "shoes", "runs"):
        assert delta_rows(out, run_id, table) == 0, table
    assert not warehouse.exists()
    if store.is_local:
        assert not (Path(store.uri) / WAREHOUSE).exists()


def assert_no_traceback(status: int, err: str) -> None:
    assert status == 0, err[-3000:]
    assert "Traceback" not in err and "error: " not in err, err[-3000:]


# ------------------------------------------------------------------ 1. a task fails on its first attempt


@pytest.mark.slow
def test_every_task_failing_on_its_first_attempt_is_retried_to_the_bytes_of_a_clean_run(
        store_uri, spark, tmp_path, baccarat):
    """The fault: every task raises mid-write on its attempt 0 (the test seam's first-attempt fault);
    local[2,2] allows each task one retry. In a
    bucket a task writes its objects under their final names: what the failed attempt left there must
    be replaced by the retry's bytes."""
    args = ("simulate", "--shoes", 60, "--seed", 4, "--master", "local[2,2]", "--partitions", 3, "--run-id", "r")
    logs = tmp_path / "logs"
    faulty = baccarat(*args, "--out", store_uri, cwd=tmp_path, BACCARAT_LOG_DIR=str(logs), **injected("first-attempt"))
    clean = simulate(spark, tmp_path / "clean", seed=4, shoes=60, partitions=3, run_id="r")  # meanwhile, here
    status, out, err = finish(faulty)
    assert status == 0 and err == "", err[-3000:]  # the retried tasks' traces are in Spark's log, not here
    assert "committed run 'r': 60 shoes" in out
    # Each of the three tasks failed (its first attempt: the injected error names its shoes), and
    # only its first attempt: Spark logs every failed attempt as "Exception in task I.A".
    [log] = logs.iterdir()
    spark_log = log.read_text()
    assert set(re.findall(r"injected fault: first attempt of the task for shoes (\d+-\d+)", spark_log)) == {
        "0-19", "20-39", "40-59"}
    assert sorted(set(re.findall(r"Exception in task (\d+\.\d+) in stage", spark_log))) == ["0.0", "1.0", "2.0"]
    record = read_record(store_uri, "r")
    assert record.spark_master == "local[2,2]" and record.partitions == 3
    expected = {f.path: f.sha256 for f in clean.files}
    assert checksums(store_uri, "r") == expected and len(expected) == 6
    assert listing(store_uri, "rounds", "r") + listing(store_uri, "shoes", "r") == sorted(expected)  # no temporaries
    assert_committed_once(store_uri, record)  # the files in place hash to the record's checksums


@pytest.mark.slow
def test_an_object_stored_longer_than_its_task_wrote_is_never_committed_and_the_rerun_writes_it_again(
        store_uri, spark, tmp_path, cli, baccarat):
    """The corruption a cluster without credentials on its executors committed: objects holding the
    upload's chunk encoding, longer than their tasks recorded (the test seam's grown-object fault)."""
    args = ("simulate", "--shoes", 40, "--seed", 6, "--master", "local[2]", "--partitions", 2, "--run-id", "g",
            "--out", store_uri)
    status, out, err = finish(baccarat(*args, cwd=tmp_path, **injected("grown-object")))
    assert status == 1 and "committed run" not in out, err[-3000:]
    store = Store.parse(store_uri)
    grown = re.fullmatch(r"error: run 'g' was not committed: (\S+) holds ([\d,]+) bytes, its task wrote ([\d,]+); "
                         r"run the command again to write it again\n", err)
    assert grown, err[-3000:]
    assert grown[1].startswith(store.location("rounds", "run_id=g", "part-"))
    stored, recorded = (int(grown[n].replace(",", "")) for n in (2, 3))
    assert stored == recorded + len(f"{recorded:x}\r\n\r\n0\r\n\r\n")
    assert_nothing_visible(store_uri, "g", cli, tmp_path)

    status, out, err = finish(baccarat(*args, cwd=tmp_path))  # the same command, without the fault
    assert status == 0 and "committed run 'g': 40 shoes" in out, err[-3000:]
    clean = simulate(spark, tmp_path / "clean", seed=6, shoes=40, partitions=2, run_id="g")
    assert checksums(store_uri, "g") == {f.path: f.sha256 for f in clean.files}
    assert_committed_once(store_uri, read_record(store_uri, "g"))  # the objects in place hash to the record


# ------------------------------------------------------------------ 2. the driver is killed mid-write


# 30,000 shoes in 30 tasks of 1,000 on local[2]: the first part files are in place well before the
# runs row, and the whole run takes a few seconds (300,000 shoes would take a minute or more).
KILLED_SHOES = 30_000
KILLED_PARTITIONS = 30
KILLED_ARGS = ("simulate", "--shoes", KILLED_SHOES, "--seed", 4, "--master", "local[2]",
               "--partitions", KILLED_PARTITIONS)
KILLED_RUN = f"punto_banco-s4-n{KILLED_SHOES}"


@pytest.fixture(scope="module")
def clean_killed_run(spark, tmp_path_factory) -> dict[str, str]:
    """path -> checksum of the killed run's files as an uninterrupted run writes them (once, in the
    suite's session: the bytes depend on the parameters and the ranges, not on the master or store)."""
    record = simulate(spark, tmp_path_factory.mktemp("clean"), seed=4, shoes=KILLED_SHOES,
                      partitions=KILLED_PARTITIONS, run_id=KILLED_RUN)
    return {f.path: f.sha256 for f in record.files}


@pytest.mark.slow
def test_a_driver_killed_mid_write_leaves_nothing_visible_and_the_rerun_commits_one_identical_copy(
        store_uri, tmp_path, cli, baccarat, clean_killed_run):
    store = Store.parse(store_uri)
    process = baccarat(*KILLED_ARGS, "--out", store_uri, cwd=tmp_path)
    tree: set[int] = set()
    try:
        deadline = time.monotonic() + TIMEOUT
        # A task has put its files in place: seen by listing the run's folder, or its bucket prefix.
        while not any(Path(p).name.startswith("part-") for p in listing(store_uri, "rounds", KILLED_RUN)):
            assert process.poll() is None, f"simulate ended before the kill:\n{process.stderr.read()[-3000:]}"
            assert time.monotonic() < deadline, "no part file appeared"
            time.sleep(0.01)
        # Freeze the driver and its JVM so that no new Python worker starts while the tree is listed;
        # then SIGKILL the whole group. The Python workers live in their daemon's own process group:
        # they must die with the JVM (the daemon sees its stdin close and hangs them up).
        os.killpg(process.pid, signal.SIGSTOP)
        tree = descendants(process.pid) | {process.pid}
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate(timeout=30)
        assert process.returncode == -signal.SIGKILL
        assert read_record(store_uri, KILLED_RUN) is None, "the kill came too late: the run was committed"
        deadline = time.monotonic() + 30
        while running(tree) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not running(tree), "processes of the killed run outlived it"
    finally:
        for pid in running(tree):  # only processes of the run this test started
            os.kill(pid, signal.SIGKILL)

    finished = [p for p in listing(store_uri, "rounds", KILLED_RUN) if Path(p).name.startswith("part-")]
    assert finished  # finished files of the uncommitted run are in the store...
    assert pq.read_metadata(store.fs_path(finished[0]), filesystem=store.filesystem).num_rows > 0
    assert_nothing_visible(store_uri, KILLED_RUN, cli, tmp_path)  # ...and no reader sees them
    warehouse, _ = publish_warehouse(store, tmp_path / "killed.duckdb")  # the warehouse of the committed runs: none
    with duckdb.connect(str(warehouse), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM outcome_summary").fetchone()[0] == 0
        if store.is_local:  # rounds and shoes are views of a local OUT's files only
            assert con.execute("SELECT count(*) FROM rounds").fetchone()[0] == 0
            assert con.execute("SELECT count(*) FROM shoes").fetchone()[0] == 0

    status, _, err = finish(baccarat(*KILLED_ARGS, "--out", store_uri, cwd=tmp_path))  # the same command again
    assert status == 0, err[-3000:]
    assert committed_runs(store) == [KILLED_RUN]
    assert checksums(store_uri, KILLED_RUN) == clean_killed_run and len(clean_killed_run) == 60
    assert_committed_once(store_uri, read_record(store_uri, KILLED_RUN))
    # What the killed run had put in place was replaced by the same bytes under the same names. Temporary
    # files of the killed job's attempts may stay (hidden, never read) until they are stale enough for the
    # next job to remove, or for `baccarat vacuum`; none of the rerun's stay.
    in_store = listing(store_uri, "rounds", KILLED_RUN) + listing(store_uri, "shoes", KILLED_RUN)
    assert [p for p in in_store if not temporaries([p])] == sorted(clean_killed_run)
    if store.is_local:
        left = temporaries(Path(store.uri).rglob("*"))
        assert len({name.split(".")[-3] for name in left}) <= 1, left  # the killed job's tag only


# ------------------------------------------------------------------ 3. runs and builds racing on one OUT


@pytest.mark.slow
def test_two_runs_and_a_run_started_twice_all_at_once_are_each_committed_once(store_uri, tmp_path, baccarat):
    """Three jobs on one OUT at the same time: two different runs ("first", "second") both land, and the
    same run started twice ("first" again) ends with one copy of its rows and one row in `runs`."""
    common = ("simulate", "--shoes", 40, "--partitions", 2, "--master", "local[1]", "--out", store_uri)
    started = [(run_id, baccarat(*common, "--seed", seed, "--run-id", run_id, cwd=tmp_path))
               for run_id, seed in (("first", 1), ("second", 2), ("first", 1))]
    for run_id, process in started:
        status, out, err = finish(process)
        assert status == 0 and err == "", err[-3000:]
        assert f"committed run {run_id!r}: 40 shoes" in out or f"{run_id!r} is already committed" in out, out
    assert committed_runs(Store.parse(store_uri)) == ["first", "second"]
    records = [read_record(store_uri, run_id) for run_id in ("first", "second")]
    assert [r.seed for r in records] == [1, 2]
    for record in records:
        assert_committed_once(store_uri, record)
    total = sum(r.rounds for r in records)
    assert generic_delta(store_uri, "rounds").to_pyarrow_table(columns=["run_id"]).num_rows == total
    assert len(snapshot_files(store_uri, "runs", "first")) == 1  # each "first" job wrote a row; one is committed


@pytest.mark.slow
def test_two_mart_builds_at_once_leave_one_copy_of_the_run_in_every_mart(spark, store_uri, tmp_path, baccarat):
    record = simulate(spark, store_uri, seed=6, shoes=30, partitions=2, run_id="m")
    # Both builds publish the same warehouse: OUT/warehouse.duckdb, or ./warehouse.duckdb for a bucket.
    builds = [baccarat("marts", "--out", store_uri, cwd=tmp_path) for _ in range(2)]
    for build in builds:
        status, out, err = finish(build)
        assert_no_traceback(status, err)
        assert "published" in out
    store = Store.parse(store_uri)
    raced = {}
    for name in MARTS:
        table = contract(name).table
        files = snapshot_files(store_uri, table, "m")
        # one build's files, not both builds', nor none: a mart the range tasks write has one per range
        ranges = one_process_ranges(30) if store.is_local else 1
        assert len(files) == (ranges if name in PER_SHOE_MARTS else 1), (name, files)
        assert len({path.rsplit("-shoes-", 1)[0] for path in files}) == 1, (name, files)
        raced[name] = delta_rows(store_uri, "m", table)
        assert raced[name] == sum(pq.read_metadata(store.fs_path(path), filesystem=store.filesystem).num_rows
                                  for path in files) > 0
    warehouse = store.warehouse_path() if store.is_local else tmp_path / WAREHOUSE
    with duckdb.connect(str(warehouse), read_only=True) as con:
        con.execute(f"SET file_search_path = '{warehouse.parent}'")  # a local OUT's views name files from there
        assert {name: con.execute(f"SELECT count(*) FROM {name}").fetchone()[0] for name in MARTS} == raced
        assert con.execute("SELECT DISTINCT rounds FROM outcome_summary").fetchall() == [(record.rounds,)]
        assert sorted(con.execute("SELECT outcome FROM outcome_summary").fetchall()) == [("B",), ("P",), ("T",)]
    assert temporaries(warehouse.parent.iterdir()) == []


# ------------------------------------------------------------------ 4. an overwrite fails half-way


def refuse_commits_of(monkeypatch, table: str) -> None:
    """Every commit to `table` fails with an OSError where a real one would (opening the Delta table)."""
    open_or_create = Store._open_or_create

    def refused(self, name, schema):
        if name == table:
            raise OSError(errno.EIO, f"injected: the {name} commit cannot be written")
        return open_or_create(self, name, schema)

    monkeypatch.setattr(Store, "_open_or_create", refused)


def assert_still_the_old_run(store: Store, old: RunRecord) -> None:
    """Every reader of the pipeline sees the old run whole: its runs row, its files verified at the
    versions the row records."""
    assert committed_runs(store) == ["R"] and delta_rows(store.uri, "R", "runs") == 1
    record = read_run(store, "R")
    assert (record.parameters, record.rounds, record.files, record.versions) == (
        old.parameters, old.rounds, old.files, old.versions)
    check_run(store, record)  # sizes, checksums, contracts, and the files committed at the recorded versions
    assert record.shoes == 20


def test_an_overwrite_failing_after_the_rounds_commit_keeps_the_old_run_until_one_succeeds(
        spark, store_uri, tmp_path, cli, monkeypatch):
    """Run R with other parameters replaces R table by table: rounds, shoes, then the runs row. The
    overwrite fails at the shoes commit, then (run again) at the runs row: the data tables already
    hold the new files, yet the pipeline keeps the old run whole until an overwrite succeeds."""
    old = simulate(spark, store_uri, seed=1, shoes=20, partitions=2, run_id="R")
    store = Store.parse(store_uri)
    old_files = {table: {f.path for f in old.files_of(table)} for table in ("rounds", "shoes")}

    with monkeypatch.context() as patch:  # in process: the job's own error
        refuse_commits_of(patch, "shoes")
        plan = job.Plan("R", load_rule_set(), 2, 30, store, 2)
        assert not already_committed(plan, overwrite=True)
        try:  # not pytest.raises: see test_a_task_that_fills_the_disk_removes_its_temporary_files
            run_job(spark, plan, overwrite=True)
        except JobFailed as error:
            message = str(error)
        else:
            pytest.fail("the overwrite committed although its shoes commit failed")
    assert message.startswith("run 'R' was not committed: ") and "\n" not in message
    assert store.location("shoes") in message and "injected" in message
    new_rounds = snapshot_files(store_uri, "rounds", "R")  # committed before the failure
    assert new_rounds and not set(new_rounds) & old_files["rounds"]
    assert set(snapshot_files(store_uri, "shoes", "R")) == old_files["shoes"]
    assert_still_the_old_run(store, old)

    overwrite = ("simulate", "--shoes", 30, "--seed", 2, "--partitions", 2, "--out", store_uri, "--run-id", "R",
                 "--overwrite")
    with monkeypatch.context() as patch:  # through the CLI: one line, exit status 1
        refuse_commits_of(patch, "runs")
        status, out, err = cli(*overwrite)
    assert status == 1 and "committed run" not in out
    assert err.count("\n") == 1 and err.startswith("error: run 'R' was not committed: "), err
    assert store.location("runs") in err and "injected" in err
    assert snapshot_files(store_uri, "rounds", "R") == new_rounds
    assert not set(snapshot_files(store_uri, "shoes", "R")) & old_files["shoes"]  # shoes replaced too
    assert_still_the_old_run(store, old)
    status, _, err = cli("marts", "--out", store_uri, "--warehouse", tmp_path / "old.duckdb")
    assert status == 0, err
    with duckdb.connect(str(tmp_path / "old.duckdb"), read_only=True) as con:  # the marts of the old rows
        assert con.execute("SELECT DISTINCT rounds, shoes FROM outcome_summary").fetchall() == [(old.rounds, 20)]

    # The same overwrite, once the store accepts commits again, replaces the run: new rows, one copy.
    status, out, err = cli(*overwrite)
    assert status == 0 and "committed run 'R': 30 shoes" in out, err
    new = read_run(store, "R")
    assert new.parameters["seed"] == 2 and new.shoes == 30
    assert sorted(f.path for f in new.files_of("rounds")) == new_rounds
    assert_committed_once(store_uri, new)
    assert load_run(store, "R").record == new


# ------------------------------------------------------------------ 3. the disk fills up


@pytest.fixture
def small_disk(tmp_path):
    """A 3 MB tmpfs: a real full disk. Mounting needs root (CAP_SYS_ADMIN); where it is not permitted
    the tests that need it are skipped, saying so."""
    mount_point = tmp_path / "small"
    mount_point.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount_point)],
                             capture_output=True, text=True, check=False)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here to fill a disk: {mounted.stderr.strip() or mounted.returncode}")
    try:
        yield mount_point
    finally:
        if subprocess.run(["umount", str(mount_point)], capture_output=True, check=False).returncode != 0:
            subprocess.run(["umount", "-l", str(mount_point)], check=True)  # a straggler holds a file open


@pytest.mark.slow
def test_a_full_disk_fails_the_run_in_one_line_and_commits_nothing(small_disk, tmp_path, cli, baccarat):
    out = small_disk / "data"  # 20,000 shoes make about 13 MB of Parquet: the 3 MB disk fills up
    logs = tmp_path / "logs"
    status, stdout, err = finish(baccarat("simulate", "--shoes", 20_000, "--seed", 4, "--master", "local[2]",
                                          "--partitions", 4, "--out", out, "--run-id", "full", cwd=tmp_path,
                                          BACCARAT_LOG_DIR=str(logs)))
    assert status == 1 and "committed run" not in stdout  # a failure, not bad input
    # One line, ours; Spark's lines and the failed tasks' traces are in the log file it names.
    [log] = logs.iterdir()
    assert err.count("\n") == 1, err[-3000:]
    assert err.startswith(f"error: run 'full' was not committed: a task failed writing under {out}: "), err
    assert "No space left on device" in err and err.endswith(f" (the task's trace is in {log})\n"), err
    trace = log.read_text()
    assert re.search(r"ERROR Executor: Exception in task \d+\.0 in stage", trace), trace[-3000:]
    assert re.search(r"OSError: .*No space left on device", trace) and "pipeline/simulate/job.py" in trace
    assert_nothing_visible(out, "full", cli, tmp_path)


def test_a_task_that_fills_the_disk_removes_its_temporary_files(small_disk):
    """Closing a file on a full disk fails too; that must neither hide the first error nor leave the
    task's temporary files taking the space."""
    plan = job.Plan("full", load_rule_set(), 4, 20_000, Store.parse(str(small_disk / "data")), 1)
    # Not pytest.raises: its ExceptionInfo and this traceback (through pyarrow's writer) form a cycle
    # that outlives the test, and collecting it later made CPython 3.11.7 fail pytest's own assertion
    # rewriting at the end of the session ("SystemError: AST constructor recursion depth mismatch").
    try:
        job.write_range(plan, 0, 20_000)
    except OSError as error:
        failure = error.errno
    else:
        pytest.fail("20,000 shoes fitted on a 3 MB disk")
    assert failure == errno.ENOSPC
    assert run_files(small_disk / "data", "full") == []
    assert os.statvfs(small_disk).f_bfree == os.statvfs(small_disk).f_blocks  # the space is back


def test_a_failed_task_ends_its_job_with_none_of_its_tasks_temporary_files_left(tmp_path, baccarat):
    """A task that fails ends the job while the others still write (on a disk that filled, the failed one
    freed its space and they carried on): Spark killed them mid-write, and their temporary files stayed,
    taking the space, until `baccarat vacuum` ten minutes on (a new user's trial: 5.5 MB of a composition's
    on a full disk, each time). They go as at a Ctrl-C, once the driver's JVM and its workers are gone."""
    out = tmp_path / "data"
    status, stdout, err = finish(baccarat("simulate", "--shoes", 400, "--seed", 3, "--master", "local[2]",
                                          "--partitions", 2, "--out", out, "--run-id", "f", cwd=tmp_path,
                                          BACCARAT_LOG_DIR=str(tmp_path / "logs"), **injected("first-task-fails")))
    assert status == 1 and "committed run" not in stdout, err[-3000:]
    assert err.startswith(f"error: run 'f' was not committed: a task failed writing under {out}: "), err[-3000:]
    assert run_files(out, "f") == []


def test_a_commit_that_cannot_be_written_fails_in_one_line(spark, cli, tmp_path):
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "run_id=c").write_text("in the way")  # the folder of the run's row cannot be made
    status, out, err = cli("simulate", "--shoes", 20, "--seed", 1, "--out", tmp_path, "--run-id", "c")
    assert status != 0 and "committed run" not in out
    assert err.count("\n") == 1 and err.startswith("error: run 'c' was not committed: "), err
    assert str(tmp_path / "runs" / "run_id=c") in err
    assert (tmp_path / "runs" / "run_id=c").read_text() == "in the way"
    assert delta_rows(tmp_path, "c") > 0  # its rounds are committed; no pipeline reader sees the run
    assert committed_runs(Store.parse(str(tmp_path))) == []
