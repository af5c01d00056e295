"""Speed and memory report for the simulation: kernel, end-to-end job and peak memory.

Run from the repository root (takes a minute or two; do not run other heavy work meanwhile):

    python benchmarks/simulate_bench.py [--shoes 1000000] [--kernel-shoes 200000] [--c-shoes 400000] [--keep]
    python benchmarks/simulate_bench.py --s3 [--shoes 100000]
    python benchmarks/simulate_bench.py --task --shoes 40000

Every target is a ratio against a reference measured in the same run on the same machine:

1. kernel:   deal_shoes (every column in memory, one core) vs. the C reference in mode 1
             (c_reference.c in the nearest shared/bench above the repository); target ratio >= 0.50.
2. simulate: `baccarat simulate --master local[2]` into a local folder, wall clock including
             Spark start-up and the Delta commits, vs. pyarrow alone writing the same rounds from
             memory in 2 processes; speed ratio (pyarrow seconds / simulate seconds) target >= 0.50.
3. memory:   peak RSS of every process under `baccarat simulate`, polled from /proc;
             target < 1536 MB per process.

--s3 starts a local S3 server (moto, 127.0.0.1) and reports the job's throughput into a bucket
(no target); --load reports the job alone on a local disk; --task reports the CPU seconds of one
task's write_range (dealing, Arrow, Parquet, hashing, in this process) over --shoes, best of three,
a figure a loaded machine moves less than wall clock. The script is a report: it exits 0
whatever the ratios are.
"""

import argparse
import multiprocessing as mp
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
from bench_support import (
    machine_load,
    memory_lines,
    run_polled,
    run_record,
    s3_bucket,
    scratch_folder,
    shared_bench_folder,
    simulate_command,
    warm_driver_archive,
)

from pipeline.rule_sets import load_rule_set
from pipeline.runs import RunRecord
from pipeline.storage import Store
from pipeline.simulate.batch import Dealer
from pipeline.simulate.job import SHOES_PER_BATCH, WRITE_OPTIONS, Plan, write_range
from pipeline.simulate.kernel import deal_shoes

RULES = "punto_banco"
SEED = 1
C_SOURCE = shared_bench_folder() / "c_reference.c"
KERNEL_TARGET = 0.50
SIMULATE_TARGET = 0.50  # speed: pyarrow's seconds / the job's seconds
MEMORY_TARGET_MB = 1536


# ---------------------------------------------------------------- 1. kernel vs. C


def c_reference_rate(shoes: int, workdir: Path) -> float:
    """Rounds/s of the C reference in mode 1 (per-round record columns filled)."""
    binary = workdir / "c_reference"
    subprocess.run(["gcc", "-O2", "-o", str(binary), str(C_SOURCE)], check=True)
    line = subprocess.run([str(binary), str(shoes), str(SEED), "1"], check=True,
                          capture_output=True, text=True).stdout
    return float(re.search(r"rounds_per_s=([0-9.e+]+)", line).group(1))


def batches(shoes: int):
    for first in range(0, shoes, SHOES_PER_BATCH):
        yield first, min(SHOES_PER_BATCH, shoes - first)


def kernel_rate(dealer: Dealer, shoes: int) -> float:
    """Rounds/s of the compiled kernel alone, one core, after a warm-up call of one full batch."""
    rest = dealer.kernel_arguments()
    deal_shoes(SEED, 0, SHOES_PER_BATCH, *rest)
    rounds = 0
    started = time.perf_counter()
    for first, count in batches(shoes):
        rounds += len(deal_shoes(SEED, first, count, *rest)[0])
    return rounds / (time.perf_counter() - started)


def dealer_rate(dealer: Dealer, shoes: int) -> float:
    """Rounds/s of Dealer.deal: kernel plus Arrow table construction."""
    dealer.deal(SEED, 0, SHOES_PER_BATCH)
    rounds = 0
    started = time.perf_counter()
    for first, count in batches(shoes):
        rounds += dealer.deal(SEED, first, count)[0].num_rows
    return rounds / (time.perf_counter() - started)


# ---------------------------------------------------------------- 2. simulate vs. pyarrow


def run_simulate(shoes: int, out: str, workdir: Path) -> dict:
    """Run the CLI job into `out` (a folder or a URI), polling memory; returns wall seconds, the
    run's record (its runs row) and per-process peaks."""
    run_id = f"bench-{shoes}"
    command = simulate_command(shoes, SEED, out, run_id, "--rules", RULES)
    log = workdir / "simulate.log"
    seconds, peaks = run_polled(command, log)
    return {"seconds": seconds, "record": run_record(out, run_id), "peaks": peaks, "log": log.read_text()}


def job_seconds(record: RunRecord) -> float:
    """Seconds between jobs.run_job starting (Spark already up) and the rounds and shoes commits, from the
    runs row (the row's own commit, last, is not in it)."""
    return (record.ended_at - record.started_at).total_seconds()


def write_worker(first: int, last: int, path: str, ready, results) -> None:
    """Deal shoes [first, last) into memory (not timed), then time writing their rounds to one file."""
    dealer = Dealer.of(load_rule_set(RULES))
    tables = [dealer.deal(SEED, start, min(SHOES_PER_BATCH, last - start))[0]
              for start in range(first, last, SHOES_PER_BATCH)]
    ready.wait()
    started = time.monotonic()
    with pq.ParquetWriter(path, tables[0].schema, **WRITE_OPTIONS) as writer:
        for table in tables:
            writer.write_table(table)
    results.put((started, time.monotonic(), sum(t.num_rows for t in tables)))


def pyarrow_reference(shoes: int, workdir: Path, processes: int = 2) -> tuple[float, int]:
    """Wall seconds from the barrier until every process has written its share; and the rounds."""
    context = mp.get_context("spawn")
    ready, results = context.Barrier(processes), context.Queue()
    size = -(-shoes // processes)
    workers = [context.Process(target=write_worker,
                               args=(first, min(first + size, shoes), str(workdir / f"ref-{first}.parquet"),
                                     ready, results))
               for first in range(0, shoes, size)]
    for worker in workers:
        worker.start()
    spans = [results.get() for _ in workers]
    for worker in workers:
        worker.join()
    if any(worker.exitcode for worker in workers):
        sys.exit("a pyarrow reference process failed")
    return max(s[1] for s in spans) - min(s[0] for s in spans), sum(s[2] for s in spans)


# ---------------------------------------------------------------- report


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shoes", type=int, default=1_000_000, help="shoes for the end-to-end job")
    parser.add_argument("--kernel-shoes", type=int, default=200_000, help="shoes for the kernel timing")
    parser.add_argument("--c-shoes", type=int, default=400_000, help="shoes for the C reference")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument("--load", action="store_true",
                        help="only the job and its memory, for load runs too large for the in-memory reference")
    parser.add_argument("--s3", action="store_true", help="only the job's throughput into a local S3 server")
    parser.add_argument("--task", action="store_true", help="only the CPU seconds of one task's write_range")
    args = parser.parse_args()

    with scratch_folder("simulate-bench-", args.keep) as workdir:
        warm_driver_archive(workdir)
        print(machine_load(), flush=True)
        (s3_report if args.s3 else load_report if args.load else task_report if args.task else report)(args, workdir)
        print(machine_load())


def simulate_line(shoes: int, sim: dict, where: str = "") -> str:
    rounds, in_job = sim["record"].rounds, job_seconds(sim["record"])
    return (f"baccarat simulate{where}:  {shoes:,} shoes  {rounds:,} rounds  {sim['seconds']:.1f} s wall "
            f"({sim['seconds'] - in_job:.1f} s before jobs.run_job: start-up and Spark session; "
            f"{in_job:.1f} s in jobs.run_job: tasks and commits; {rounds / sim['seconds'] / 1e6:.2f}M rounds/s)")


def memory_verdict(peaks: dict) -> str:
    peak_name, peak_kb = max(peaks.values(), key=lambda p: p[1])
    peak_mb = peak_kb / 1024
    return (f"memory        peak {peak_mb:,.0f} MB ({peak_name})  (target < {MEMORY_TARGET_MB} MB per process)  "
            f"{verdict(peak_mb < MEMORY_TARGET_MB)}")


def load_report(args, workdir: Path) -> None:
    """The job alone on a large run: its time, the size on disk and every process's peak memory."""
    sim = run_simulate(args.shoes, str(workdir / "out"), workdir)
    print(simulate_line(args.shoes, sim), flush=True)
    size = sum(p.stat().st_size for p in (workdir / "out").rglob("*") if p.is_file())
    print(f"on disk: {size / 2**30:.2f} GiB ({size / sim['record'].rounds:.1f} bytes per round)")
    print("peak memory per process (VmHWM):")
    print("\n".join(memory_lines(sim["peaks"])))
    print(memory_verdict(sim["peaks"]))


def task_report(args, workdir: Path) -> None:
    """One task's write path in this process: CPU seconds of write_range over --shoes, best of three."""
    plan = Plan("bench", load_rule_set(RULES), SEED, args.shoes, Store.parse(str(workdir / "out")), partitions=1)
    write_range(plan, 0, SHOES_PER_BATCH)  # the kernel's compilation or cache load, not timed
    seconds = []
    for _ in range(3):
        started = time.process_time()
        files = write_range(plan, 0, args.shoes)["files"]
        seconds.append(time.process_time() - started)
    print(f"one task's write_range: {args.shoes:,} shoes  {min(seconds):.3f} s of CPU (best of 3; "
          f"all {', '.join(f'{s:.3f}' for s in seconds)})  files {', '.join(f['sha256'][:12] for f in files)}")


def s3_report(args, workdir: Path) -> None:
    """The job into a bucket of a local S3 server: its throughput, no target."""
    with s3_bucket(workdir / "moto.log") as bucket:
        sim = run_simulate(args.shoes, f"{bucket}/simulate", workdir)
    print(simulate_line(args.shoes, sim, " into S3"))
    print(memory_verdict(sim["peaks"]))


def report(args, workdir: Path) -> None:
    dealer = Dealer.of(load_rule_set(RULES))
    c_rate = c_reference_rate(args.c_shoes, workdir)
    print(f"C reference mode 1: {args.c_shoes:,} shoes  {c_rate / 1e6:.1f}M rounds/s", flush=True)
    k_rate = kernel_rate(dealer, args.kernel_shoes)
    print(f"kernel deal_shoes:  {args.kernel_shoes:,} shoes  {k_rate / 1e6:.1f}M rounds/s", flush=True)
    d_rate = dealer_rate(dealer, args.kernel_shoes)
    print(f"Dealer.deal (kernel + Arrow tables): {d_rate / 1e6:.1f}M rounds/s  (information)", flush=True)

    sim = run_simulate(args.shoes, str(workdir / "out"), workdir)
    rounds = sim["record"].rounds
    print(simulate_line(args.shoes, sim), flush=True)
    shutil.rmtree(workdir / "out")

    ref_seconds, ref_rounds = pyarrow_reference(args.shoes, workdir)
    print(f"pyarrow, 2 procs:   {ref_rounds:,} rounds written in {ref_seconds:.1f} s "
          f"({ref_rounds / ref_seconds / 1e6:.2f}M rounds/s)", flush=True)
    if ref_rounds != rounds:
        print(f"warning: the reference wrote {ref_rounds:,} rounds, the job {rounds:,}")

    print("peak memory per process (VmHWM):")
    print("\n".join(memory_lines(sim["peaks"])))

    k_ratio, s_ratio = k_rate / c_rate, ref_seconds / sim["seconds"]
    print()
    print(f"kernel        {k_rate / 1e6:.1f}M rounds/s   C mode 1  {c_rate / 1e6:.1f}M rounds/s   "
          f"ratio {k_ratio:.2f}  (target >= {KERNEL_TARGET:.2f})  {verdict(k_ratio >= KERNEL_TARGET)}")
    print(f"simulate      {args.shoes:,} shoes  {sim['seconds']:.1f} s   pyarrow 2 procs {ref_seconds:.1f} s   "
          f"speed ratio {s_ratio:.2f}  (target >= {SIMULATE_TARGET:.2f})  {verdict(s_ratio >= SIMULATE_TARGET)}")
    print(memory_verdict(sim["peaks"]))


if __name__ == "__main__":
    main()
