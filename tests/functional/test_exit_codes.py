"""Exit codes that tell the truth: every command that touches Delta tables, run again and again in its
own process on each store, exits 0 with nothing on stderr (a finished command used to abort at exit,
134, when Arrow's threads freed Python buffers during the interpreter's finalisation); and the
README's recipe for reading the tables from a script exits 0 as written. tests/unit/test_console.py
checks the mechanism itself: a finished command ends before the interpreter's finalisation."""

import os
import re
import signal
import subprocess
import sys
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


@pytest.mark.slow
def test_ctrl_c_during_a_job_exits_130_with_one_line(tmp_path):
    """Typer turns Ctrl-C into status 130 silently; the command says why it stopped, in one line. As the
    first command of its cache, it was making the driver's archive: it does not wait for its JVM to write
    one (it waited a minute on a busy machine), and keeps nothing."""
    command = [sys.executable, "-c", "from pipeline.cli import console; console()", "simulate",
               "--shoes", "2000000", "--seed", "1", "--out", str(tmp_path / "data"), "--master", "local[1]"]
    cache = tmp_path / "cache"
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env=os.environ | {"BACCARAT_CACHE_DIR": str(cache)}) as job:
        progress = job.stderr.readline()  # the job is running once it reports progress
        assert "shoes" in progress, progress + job.stderr.read()
        job.send_signal(signal.SIGINT)
        out, stderr = job.communicate(timeout=300)
    assert (job.returncode, out, without_progress(stderr)) == (130, "", "error: interrupted\n")
    assert not (tmp_path / "data" / "runs").exists()
    assert list((cache / "jvm").iterdir()) == []
