"""Exit codes that tell the truth: every command that touches Delta tables, run again and again in its
own process on each store, exits 0 with nothing on stderr (a finished command used to abort at exit,
134, when Arrow's threads freed Python buffers during the interpreter's finalisation); and the
README's recipe for reading the tables from a script exits 0 as written. tests/unit/test_console.py
checks the mechanism itself: a finished command ends before the interpreter's finalisation."""

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from cli_process import without_progress

from pipeline.cli import main

REPETITIONS = 6
SHOES = 20
RUN_ID = f"punto_banco-s7-n{SHOES}"
MARTS_SIZE = ["--road-cells-shoes", "5", "--road-stats-shoes", "10"]
README = Path(__file__).parents[2] / "README.md"


def baccarat(*args: str) -> tuple[int, str]:
    """`baccarat ARGS` in a process of its own through the console entry point; (status, stderr)."""
    done = subprocess.run([sys.executable, "-c", "from pipeline.cli import console; console()", *args],
                          capture_output=True, text=True, timeout=600)
    return done.returncode, done.stderr


def new_bucket(endpoint: str) -> str:
    import boto3

    name = f"test-{uuid.uuid4().hex[:16]}"
    boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket=name)
    return f"s3://{name}/data"


def commit_run(out: str, folder: Path) -> tuple[str, Path]:
    assert main(["simulate", "--shoes", str(SHOES), "--seed", "7", "--out", out, "--partitions", "2"]) == 0
    assert main(["marts", "--out", out, "--warehouse", str(folder / "warehouse.duckdb"), *MARTS_SIZE]) == 0
    assert main(["composition", "--run-id", RUN_ID, "--out", out, "--shoes", "5", "--partitions", "1"]) == 0
    return out, folder


@pytest.fixture(scope="module")
def committed(tmp_path_factory, spark, s3_endpoint) -> dict[str, tuple[str, Path]]:
    """One committed run with its marts, warehouse and round_ev on each store: {store: (OUT, folder)}."""
    local, in_s3 = tmp_path_factory.mktemp("exit-codes-local"), tmp_path_factory.mktemp("exit-codes-s3")
    return {"local": commit_run(str(local / "data"), local), "s3": commit_run(new_bucket(s3_endpoint), in_s3)}


def lanes(out: str, folder: Path) -> list[list[list[str]]]:
    """Two lanes run side by side, each command REPETITIONS times in turn; the commands that write
    to the tables (marts, vacuum) share a lane, so that they never overlap each other."""
    warehouse = ["--warehouse", str(folder / "warehouse.duckdb")]
    rerun = ["simulate", "--shoes", str(SHOES), "--seed", "7", "--out", out]
    readers = [rerun, [*rerun, "--overwrite"], ["runs", "--out", out],
               ["composition", "--run-id", RUN_ID, "--out", out, "--shoes", "5"],
               ["report", "--out", out, *warehouse, "--page", str(folder / "report" / "index.html")]]
    writers = [["marts", "--out", out, *warehouse, *MARTS_SIZE], ["vacuum", "--out", out]]
    return [[command for _ in range(REPETITIONS) for command in lane] for lane in (readers, writers)]


def run_lane(store: str, commands: list[list[str]]) -> list[tuple[str, str, int, str]]:
    return [(store, " ".join(command[:1] + [a for a in command if a == "--overwrite"]), *baccarat(*command))
            for command in commands]


@pytest.mark.slow
def test_every_command_exits_0_with_an_empty_stderr_every_time(committed):
    """Each store's two lanes, and the two stores side by side: four processes at a time."""
    stores, every_lane = zip(*[(store, lane) for store, (out, folder) in committed.items()
                               for lane in lanes(out, folder)])
    with ThreadPoolExecutor(max_workers=len(every_lane)) as pool:
        results = [result for lane in pool.map(run_lane, stores, every_lane) for result in lane]
    tally = Counter((store, command, status) for store, command, status, _ in results)
    failures = [(store, command, status, stderr[-500:]) for store, command, status, stderr in results
                if status or stderr]
    assert not failures, f"exit codes {dict(tally)}; first failures: {failures[:3]}"
    assert sum(tally.values()) == len(committed) * 7 * REPETITIONS


def readme_recipe() -> str:
    """The README's Python block for reading the tables from a script, as written there."""
    text = README.read_text(encoding="utf-8")
    section = text.split("### Reading the tables from a script", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert block, "the README has no Python recipe under 'Reading the tables from a script'"
    return re.sub(r"^ {2}", "", block[1], flags=re.MULTILINE)


@pytest.mark.slow
@pytest.mark.parametrize("store", ["local", "s3"])
def test_the_readme_recipe_for_a_script_exits_0_on_every_table(committed, store):
    out, _ = committed[store]
    recipe = readme_recipe()
    assert "s3://my-bucket/baccarat/rounds" in recipe
    scripts = [recipe.replace("s3://my-bucket/baccarat/rounds", f"{out}/{table}") + "\nprint(table.num_rows)"
               for table in ("rounds", "shoes", "runs") for _ in range(4)]

    def run(script: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                              env=os.environ)

    with ThreadPoolExecutor(max_workers=2) as pool:
        done = list(pool.map(run, scripts))
    assert [(d.returncode, d.stderr) for d in done] == [(0, "")] * len(scripts)
    assert all(int(d.stdout.split()[-1]) > 0 for d in done)


INTERRUPTED_SHOES = 2_000_000  # on local[1], a minute or more: the Ctrl-C comes once a task has ended


def temporaries(out: Path) -> list[Path]:
    return sorted(out.glob("*/run_id=*/.*.tmp"))


def data_files(out: Path) -> dict[Path, tuple[int, int]]:
    """Every file under OUT but the temporaries, with its size and modification time."""
    return {path: (path.stat().st_size, path.stat().st_mtime_ns) for path in out.rglob("*")
            if path.is_file() and path.suffix != ".tmp"}


def a_task_ended(out: Path) -> bool:
    """Whether a task of the interrupted run has renamed its file into place: its accumulator updates
    have opened the JVM's connection to the driver's accumulator server."""
    return any((out / "rounds" / f"run_id=punto_banco-s1-n{INTERRUPTED_SHOES}").glob("part-*.parquet"))


def written_by_a_task(out: Path, but: Path) -> bool:
    """Whether a task has written bytes into a temporary file under OUT (not `but`): it is dealing."""
    for temporary in temporaries(out):
        with contextlib.suppress(FileNotFoundError):  # renamed meanwhile
            if temporary != but and temporary.stat().st_size:
                return True
    return False


@pytest.mark.slow
@pytest.mark.parametrize("to_the_group", [False, True], ids=["to-the-command", "to-its-process-group"])
@pytest.mark.parametrize("stop, status, line", [(signal.SIGINT, 130, "error: interrupted\n"),
                                                (signal.SIGTERM, 143, "error: terminated\n")],
                         ids=["ctrl-c", "sigterm"])
def test_ctrl_c_or_sigterm_during_a_job_ends_it_in_one_line_leaving_none_of_its_temporaries(
        tmp_path, spark, to_the_group, stop, status, line):
    """Typer turns Ctrl-C into status 130 silently; the command says why it stopped, in one line. SIGTERM (a
    scheduler's timeout, to the command or to its process group as a supervisor may send it) ended the process
    at once, silently, and its tasks' temporary files stayed: it does as Ctrl-C does, with its own line and
    143. As the first command of its cache, it was making the driver's archive: it does not wait for its JVM to
    write one (it waited a minute on a busy machine), and keeps nothing. The temporary files its tasks were
    writing go, once its driver's JVM and their Python workers are gone (they stayed, 90 MB for 300,000 shoes,
    until `baccarat vacuum` ten minutes on); another attempt's temporary in the same folder, and the files of a
    committed run, stay as they were. Once a task has ended, the JVM holds a connection to pyspark's
    accumulator server; the JVM killed at the Ctrl-C, or signalled with the whole process group as a terminal
    does, cut it, and the server printed a traceback after the line."""
    out = tmp_path / "data"
    assert main(["simulate", "--shoes", str(SHOES), "--seed", "7", "--out", str(out), "--partitions", "2"]) == 0
    committed = data_files(out)
    other_attempt = (out / "rounds" / f"run_id=punto_banco-s1-n{INTERRUPTED_SHOES}" /
                     f".part-000000000000-000000099999-0123456789ab.parquet.{'f' * 12}.{uuid.uuid4().hex}.tmp")
    other_attempt.parent.mkdir(parents=True)
    other_attempt.write_bytes(b"another attempt's bytes")
    command = [sys.executable, "-c", "from pipeline.cli import console; console()", "simulate",
               "--shoes", str(INTERRUPTED_SHOES), "--seed", "1", "--out", str(out), "--master", "local[1]"]
    cache = tmp_path / "cache"
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                          env=os.environ | {"BACCARAT_CACHE_DIR": str(cache)}) as job:
        deadline = time.monotonic() + 300
        while not (a_task_ended(out) and written_by_a_task(out, but=other_attempt)) and job.poll() is None \
                and time.monotonic() < deadline:
            time.sleep(0.05)
        assert a_task_ended(out) and written_by_a_task(out, but=other_attempt), f"no task was dealing: {job.poll()}"
        os.killpg(job.pid, stop) if to_the_group else job.send_signal(stop)
        out_text, stderr = job.communicate(timeout=300)
    assert (job.returncode, out_text, without_progress(stderr)) == (status, "", line)
    assert temporaries(out) == [other_attempt]
    after = data_files(out)
    assert {path: after.get(path) for path in committed} == committed
    # a task's file renamed into place stays, uncommitted, as after any failed job: `baccarat vacuum` removes it
    assert {path.parent.name for path in set(after) - set(committed)} == {f"run_id=punto_banco-s1-n{INTERRUPTED_SHOES}"}
    assert list((cache / "jvm").iterdir()) == []


# A simulate that meets SIGTERM once its rounds and shoes are committed, before its runs row (argv[1]: OUT).
STOPPED_BEFORE_THE_RUNS_ROW = """
import os, signal, sys
from pipeline import jobs
from pipeline.cli import console

commit_run = jobs.commit_run

def stopped_then_committed(out, result):
    os.kill(os.getpid(), signal.SIGTERM)
    commit_run(out, result)

jobs.commit_run = stopped_then_committed
sys.argv = ["baccarat", "simulate", "--shoes", "20", "--seed", "5", "--out", sys.argv[1], "--master", "local[1]"]
console()
"""


@pytest.mark.slow
def test_a_stop_between_a_job_s_commits_waits_for_the_last_one(tmp_path):
    """SIGTERM (or Ctrl-C) after the rounds and shoes were committed and before the runs row left a run that
    `verify` failed (exit 1, its repair line asking for the seed and rules) until the job was run again. The
    stop waits for the last commit, then ends the command as it does anywhere else."""
    out = tmp_path / "data"
    done = subprocess.run([sys.executable, "-c", STOPPED_BEFORE_THE_RUNS_ROW, str(out)], capture_output=True,
                          text=True, timeout=600)
    assert (done.returncode, without_progress(done.stderr).splitlines()[-1:]) == (143, ["error: terminated"])
    assert baccarat("verify", "--out", str(out)) == (0, "")
    assert main(["runs", "--out", str(out)]) == 0


@pytest.mark.slow
def test_sigterm_to_spark_submit_during_a_job_ends_it_in_one_line_and_commits_nothing(tmp_path):
    """spark-submit's JVM, sent SIGTERM (a scheduler's timeout), stops the SparkContext in its shutdown hook
    while the job runs: the Python driver printed a Py4JJavaError traceback ("Job 0 cancelled because
    SparkContext was shut down"). It stops as SIGTERM stops `baccarat`: one line, and nothing committed."""
    out = tmp_path / "data"
    command = ["spark-submit", "--master", "local[1]", "--driver-java-options",
               f"-Dlog4j2.configurationFile={README.parent / 'conf' / 'spark' / 'log4j2.properties'}",
               str(README.parent / "jobs" / "simulate.py"), "--shoes", str(INTERRUPTED_SHOES), "--seed", "1",
               "--out", str(out)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as job:
        deadline = time.monotonic() + 300
        while not written_by_a_task(out, but=out) and job.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert written_by_a_task(out, but=out), f"no task was dealing: {job.poll()}"
        job.send_signal(signal.SIGTERM)
        said, stderr = job.communicate(timeout=300)
    lines = [line for line in (said + stderr).splitlines() if line.startswith(("error: ", "Traceback"))]
    assert (job.returncode, lines) == (143, ["error: terminated"]), stderr[-3000:]
    assert not (out / "runs").exists()


@pytest.mark.slow
@pytest.mark.parametrize("path, lacking", [("", "pipeline"), (str(README.parent), "pyarrow")])
def test_executors_whose_python_lacks_the_package_fail_a_job_in_one_line_naming_it(tmp_path, path, lacking):
    """PYSPARK_PYTHON naming a Python without this package (its daemon cannot start), or with the package
    on its path but not its dependencies (a task cannot import them): the command printed the
    Py4JJavaError's traceback and Spark's Java stack (165 lines); now one line, status 1."""
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True, timeout=120)
    done = subprocess.run([sys.executable, "-c", "from pipeline.cli import console; console()", "simulate",
                           "--shoes", str(SHOES), "--seed", "1", "--out", str(tmp_path / "data"), "--master", "local[1]"],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path,
                          env=os.environ | {"PYSPARK_PYTHON": str(bare / "bin" / "python"), "PYTHONPATH": path})
    [line] = without_progress(done.stderr).splitlines()
    assert done.returncode == 1 and f"No module named '{lacking}'" in line, done.stderr[-3000:]
    assert "the Python the executors run (PYSPARK_PYTHON) needs this package and its dependencies" in line
