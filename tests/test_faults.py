"""Faults really injected into `baccarat simulate`: a task that fails on its first attempt, the driver
killed with SIGKILL in the middle of writing, a disk that fills up, a commit that cannot be written.
Whatever happens, a run is either committed whole or invisible to every reader."""

import errno
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import polars as pl
import pytest

from pipeline.marts.publish import publish_warehouse
from pipeline.runs import committed_runs, read_run
from pipeline.simulate import job
from pipeline.storage import WAREHOUSE, Store
from pipeline.tables import load_rule_set

TIMEOUT = 300  # seconds; a simulate subprocess that hangs fails the test instead of the suite


def baccarat_command(*args) -> list[str]:
    return [sys.executable, "-m", "pipeline.cli", *(str(a) for a in args)]


def environment(**extra: str) -> dict:
    """This environment for a separate driver and JVM: never the suite's own Spark gateway."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_GATEWAY_")}
    return env | {"PYSPARK_PYTHON": sys.executable} | extra


@pytest.fixture
def baccarat():
    """start(ARGS..., cwd=, **env): `baccarat ARGS...` in its own JVM (the suite's session is local[2] and
    cannot change master), in a new session, so that its process group holds the driver and its JVM.
    A test that fails early leaves none of them running."""
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
    return process.returncode, out, err


def read_manifest(out: Path, run_id: str) -> dict | None:
    """The run's record, from its row in `runs`."""
    return read_run(Store.parse(str(out)), run_id)


def checksums(out: Path, run_id: str) -> dict[str, str]:
    record = read_manifest(out, run_id)
    assert record is not None, f"no runs row of {run_id!r} in {out}"
    return {f["path"]: f["sha256"] for f in record["files"]}


def run_files(out: Path, run_id: str) -> list[Path]:
    """Everything on disk in the run's data folders, temporaries included."""
    return sorted(p for table in ("rounds", "shoes") for p in (out / table / f"run_id={run_id}").glob("*"))


def temporaries(paths) -> list[str]:
    return [p.name for p in paths if p.name.startswith(".part-") or p.name.endswith(".tmp") or ".tmp-" in p.name]


def delta_rows(out: Path, run_id: str) -> int:
    """What a generic Delta reader sees of a run's rounds (the table may not exist yet)."""
    if not (out / "rounds" / "_delta_log").is_dir():
        return 0
    return pl.scan_delta(str(out / "rounds")).filter(pl.col("run_id") == run_id).select(pl.len()).collect().item()


def assert_nothing_visible(out: Path, run_id: str, cli) -> None:
    assert read_manifest(out, run_id) is None
    assert committed_runs(Store.parse(str(out))) == []
    status, _, err = cli("marts", "--out", out)
    assert status == 2 and f"error: no committed run in {out}" in err and err.count("\n") == 1
    assert delta_rows(out, run_id) == 0
    assert not (out / WAREHOUSE).exists()


def one_line_error(err: str) -> str:
    """The CLI's own message: the last line of stderr, the only one starting with 'error: ', with no
    driver traceback before it (Spark's executor may log the task's traceback in local mode: that is
    Spark's log, not the CLI's)."""
    lines = err.rstrip("\n").splitlines()
    assert lines and lines[-1].startswith("error: "), err[-3000:]
    assert [line for line in lines if line.startswith("error: ")] == [lines[-1]]
    for driver_trace in ("pipeline/cli.py", "pyspark.errors.exceptions", "Py4JJavaError", "py4j/java_gateway.py"):
        assert driver_trace not in err, err[-3000:]
    return lines[-1]


# ------------------------------------------------------------------ 1. a task fails on its first attempt


@pytest.mark.slow
def test_every_task_failing_on_its_first_attempt_is_retried_to_the_same_bytes(tmp_path, baccarat):
    """The fault: job.write_range raises mid-write on attempt 0 of every task when
    BACCARAT_TEST_FAIL_FIRST_ATTEMPT=1 (a test-only hook); local[2,2] allows each task one retry."""
    args = ("simulate", "--shoes", 60, "--seed", 4, "--master", "local[2,2]", "--partitions", 3, "--run-id", "r")
    faulty = baccarat(*args, "--out", "A", cwd=tmp_path, BACCARAT_TEST_FAIL_FIRST_ATTEMPT="1")
    clean = baccarat(*args, "--out", "B", cwd=tmp_path)
    (status, out, err), (clean_status, _, clean_err) = finish(faulty), finish(clean)
    assert status == 0, err[-3000:]
    assert clean_status == 0, clean_err[-3000:]
    assert "committed run 'r': 60 shoes" in out
    # Each of the three tasks failed (its first attempt: the injected error names its shoes), and
    # only its first attempt: Spark logs every failed attempt as "Exception in task I.A".
    assert set(re.findall(r"injected fault: first attempt of the task for shoes (\d+-\d+)", err)) == {
        "0-19", "20-39", "40-59"}
    assert sorted(set(re.findall(r"Exception in task (\d+\.\d+) in stage", err))) == ["0.0", "1.0", "2.0"]
    assert "injected fault" not in clean_err
    manifest = read_manifest(tmp_path / "A", "r")
    assert manifest["spark_master"] == "local[2,2]" and manifest["partitions"] == 3
    assert checksums(tmp_path / "A", "r") == checksums(tmp_path / "B", "r")
    assert len(checksums(tmp_path / "A", "r")) == 6
    assert temporaries(run_files(tmp_path / "A", "r")) == []


# ------------------------------------------------------------------ 2. the driver is killed mid-write


def _process_table() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, state) of every process, from /proc."""
    table = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        table[int(stat.parent.name)] = (int(fields[1]), fields[0])
    return table


def descendants(pid: int) -> set[int]:
    table, found, todo = _process_table(), set(), [pid]
    while todo:
        parent = todo.pop()
        for child, (ppid, _) in table.items():
            if ppid == parent and child not in found:
                found.add(child)
                todo.append(child)
    return found


def alive(pids: set[int]) -> set[int]:
    table = _process_table()
    return {pid for pid in pids if pid in table and table[pid][1] not in ("Z", "X")}


# 30,000 shoes in 30 tasks of 1,000 on local[2]: the first part files are in place about a second
# before the manifest, and the whole run takes a few seconds (300,000 shoes would take a minute or more).
KILLED_SHOES = 30_000
KILLED_ARGS = ("simulate", "--shoes", KILLED_SHOES, "--seed", 4, "--master", "local[2]", "--partitions", 30)
KILLED_RUN = f"punto_banco-s4-n{KILLED_SHOES}"


@pytest.mark.slow
def test_a_driver_killed_mid_write_leaves_nothing_visible_and_the_rerun_is_identical(tmp_path, cli, baccarat):
    out = tmp_path / "killed"
    clean = baccarat(*KILLED_ARGS, "--out", tmp_path / "clean", cwd=tmp_path)
    process = baccarat(*KILLED_ARGS, "--out", out, cwd=tmp_path)
    rounds = out / "rounds" / f"run_id={KILLED_RUN}"
    tree: set[int] = set()
    try:
        deadline = time.monotonic() + TIMEOUT
        while not any(rounds.glob("part-*.parquet")):  # a task has put its files in place
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
        assert read_manifest(out, KILLED_RUN) is None, "the kill came too late: the run was committed"
        deadline = time.monotonic() + 30
        while alive(tree) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(tree), "processes of the killed run outlived it"
    finally:
        for pid in alive(tree):  # only processes of the run this test started
            os.kill(pid, signal.SIGKILL)

    on_disk = run_files(out, KILLED_RUN)
    assert any(p.name.startswith("part-") for p in on_disk)  # finished files of the uncommitted run exist...
    assert pl.scan_parquet(rounds / "part-*.parquet").select(pl.len()).collect().item() > 0
    assert_nothing_visible(out, KILLED_RUN, cli)  # ...and no reader sees them
    publish_warehouse(Store.parse(str(out)), out / WAREHOUSE)  # the warehouse of the committed runs: none
    with duckdb.connect(str(out / WAREHOUSE), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM rounds").fetchone()[0] == 0
        assert con.execute("SELECT count(*) FROM shoes").fetchone()[0] == 0
    (out / WAREHOUSE).unlink()

    rerun = baccarat(*KILLED_ARGS, "--out", out, cwd=tmp_path)  # the same command, to completion
    (status, _, err), (clean_status, _, clean_err) = finish(rerun), finish(clean)
    assert status == 0, err[-3000:]
    assert clean_status == 0, clean_err[-3000:]
    assert committed_runs(Store.parse(str(out))) == [KILLED_RUN]
    assert delta_rows(out, KILLED_RUN) == sum(f["rows"] for f in read_manifest(out, KILLED_RUN)["files"]
                                               if f["table"] == "rounds")
    expected = checksums(tmp_path / "clean", KILLED_RUN)
    assert checksums(out, KILLED_RUN) == expected and len(expected) == 60
    assert sorted(str(p.relative_to(out)) for p in run_files(out, KILLED_RUN)) == sorted(expected)
    assert temporaries(p for p in out.rglob("*")) == []


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
    status, stdout, err = finish(baccarat("simulate", "--shoes", 20_000, "--seed", 4, "--master", "local[2]",
                                          "--partitions", 4, "--out", out, "--run-id", "full", cwd=tmp_path))
    assert status in (1, 2)  # 2 today (SimulationFailed is a BaccaratError); 1 would suit "a failure" better
    message = one_line_error(err)
    assert "No space left on device" in message and "run 'full' was not committed" in message, message
    assert str(out) in message
    assert "committed run" not in stdout
    assert_nothing_visible(out, "full", cli)


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
