"""What the benchmark scripts share: dealing a run with the CLI, reading its runs row, a command's
wall time and every process's peak memory, and a local S3 server (moto, in its own process on
127.0.0.1) for the object-store figures."""

import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from pipeline.runs import RunRecord, read_run
from pipeline.storage import Store
from pipeline.termination import terminate_as_interrupt

sys.path[:0] = [str(Path(__file__).parents[1] / "tests" / "functional"), str(Path(__file__).parents[1] / "tests")]
from local_s3 import aws_environment, s3_server  # noqa: E402  (the tests' local S3 server)

BUCKET = "bench"
POLL_SECONDS = 0.2


def shared_bench_folder() -> Path:
    """The C references' folder, shared/bench, in the nearest folder above the repository holding one
    (a checkout or a worktree of it); where it would be when there is none."""
    above = Path(__file__).resolve().parents[2:]
    return next((folder / "shared" / "bench" for folder in above if (folder / "shared" / "bench").is_dir()),
                above[0] / "shared" / "bench")


def simulate_command(shoes: int, seed: int, out: str, run_id: str, *extra: str) -> list[str]:
    return ["baccarat", "simulate", "--shoes", str(shoes), "--seed", str(seed), "--out", out,
            "--master", "local[2]", "--run-id", run_id, *extra]


def composition_command(run_id: str, out: str) -> list[str]:
    """`baccarat composition` over every shoe of a committed run, with the shipped count systems its rule
    set can use."""
    return ["baccarat", "composition", "--run-id", run_id, "--out", out, "--master", "local[2]"]


def warm_driver_archive(workdir: Path) -> None:
    """A small `baccarat simulate` first, so that the driver's class-data archive is made
    (pipeline/spark_archive.py) before any measured command starts Spark: a user's first Spark command
    makes it once, every later one maps it."""
    subprocess.run(simulate_command(10, 1, str(workdir / "warm-up"), "warm-up"), check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@contextlib.contextmanager
def scratch_folder(prefix: str, keep: bool) -> Iterator[Path]:
    """A new temporary folder for one benchmark run; removed afterwards unless `keep` (then named). A
    SIGTERM ends the benchmark as a Ctrl-C does, so that it too stops the servers it started in it."""
    terminate_as_interrupt()
    workdir = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield workdir
    finally:
        if keep:
            print(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)


def best_of_three(work) -> float:
    """The shortest of three wall times of `work()`, in seconds."""
    seconds = []
    for _ in range(3):
        started = time.perf_counter()
        work()
        seconds.append(time.perf_counter() - started)
    return min(seconds)


def machine_load() -> str:
    """Other work on the machine skews every figure: say how much there was."""
    return "load average {:.1f} {:.1f} {:.1f} on {} cores".format(*os.getloadavg(), os.cpu_count())


def run_record(out: str, run_id: str) -> RunRecord:
    """The run's record from its runs row (read in this process: set the S3 variables first)."""
    record = read_run(Store.parse(out), run_id)
    if record is None:
        sys.exit(f"no committed run {run_id!r} in {out}")
    return record


@contextlib.contextmanager
def s3_bucket(log: Path) -> Iterator[str]:
    """The tests' local S3 server with an empty bucket; while it runs, the standard AWS variables in
    os.environ point at it (the CLI's processes inherit them). Yields s3://BUCKET."""
    import boto3

    with s3_server(log) as endpoint, aws_environment(endpoint, "bench"):
        boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket=BUCKET)
        yield f"s3://{BUCKET}"


class MemoryPoller:
    """Polls /proc for every descendant of one process; keeps each one's peak RSS (VmHWM)."""

    def __init__(self, root: int):
        self.root = root
        self.peaks: dict[int, tuple[str, int]] = {}  # pid -> (name, peak kB)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(POLL_SECONDS)

    def sample(self) -> None:
        for pid in descendants(self.root):
            status = proc_status(pid)
            if not status:
                continue  # ended between listing and reading
            peak = max(status.get("VmHWM", 0), status.get("VmRSS", 0))
            seen = self.peaks.get(pid, ("", 0))[1]
            self.peaks[pid] = (process_name(pid, status), max(seen, peak))  # latest name: bash execs java


def descendants(root: int) -> list[int]:
    """root and every process below it, from the PPid of every process in /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            parent = proc_status(int(entry)).get("PPid")
            if parent is not None:
                children.setdefault(parent, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def proc_status(pid: int) -> dict:
    """Name, PPid and Vm* (kB) from /proc/PID/status; empty when the process is gone."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return {}
    fields = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key == "Name":
            fields[key] = value.strip()
        elif key == "PPid" or key.startswith("Vm"):
            fields[key] = int(value.split()[0])
    return fields


def process_name(pid: int, status: dict) -> str:
    """Short name plus what it runs, e.g. 'python (pyspark.daemon)' or 'java (SparkSubmit)'."""
    try:
        argv = [a.decode(errors="replace") for a in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0") if a]
    except OSError:
        argv = []
    for word in argv:
        if word.startswith("pyspark."):
            return f"{status.get('Name', '?')} ({word})"
        if word.endswith(("SparkSubmit", "/baccarat")):
            return f"{status.get('Name', '?')} ({re.split('[./]', word)[-1]})"
    return status.get("Name", "?")


def run_polled(command: list[str], log: Path) -> tuple[float, dict[int, tuple[str, int]]]:
    """Run a command (its output in `log`) while polling its processes' memory; returns its wall
    seconds and each process's peak (name, kB). Exits with the log when the command fails."""
    started = time.perf_counter()
    with open(log, "w") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
        with MemoryPoller(process.pid) as poller:
            returncode = process.wait()
    seconds = time.perf_counter() - started
    if returncode != 0:
        sys.exit(f"{' '.join(command[:2])} failed ({returncode}):\n{log.read_text()}")
    return seconds, poller.peaks


def memory_lines(peaks: dict[int, tuple[str, int]]) -> list[str]:
    rows = sorted(((kb, pid, name) for pid, (name, kb) in peaks.items()), reverse=True)
    return [f"  pid {pid:>7}  {name:<28} {kb / 1024:>8,.0f} MB" for kb, pid, name in rows]
