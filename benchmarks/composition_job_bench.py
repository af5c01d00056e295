"""Speed and memory of the composition job against the plain C reference, measured in one run.

Run from the repository root (a few minutes; do not run other heavy work meanwhile):

    python benchmarks/composition_job_bench.py [--shoes 10000] [--rules ez_baccarat] [--bench-dir ../shared/bench] [--keep]

1. `baccarat simulate` deals a run of --shoes shoes (not timed), and one of a fifth of them.
2. `baccarat composition --master local[2]` over every shoe of each, wall clock from the command's
   start (Spark start-up, reading the rounds and shoes, every round's exact EVs and counts, writing,
   the Delta commit), with every process's peak memory polled from /proc.
3. The reference: shared/bench/c_exact_ev.c as two processes at once, `bench N/2` each, N the
   run's rounds: the same number of compositions split over 2 processes, wall clock until both end.
   (Its compositions are random partial 8-deck shoes, 0 to 400 cards removed; a run's rounds see
   every depth of the shoe down to the cut card: the mean sizes are printed side by side.)

Targets: job seconds / C seconds <= 1.25 on the full run; peak memory per process the same for both
runs (a task holds one batch of shoes, whatever the run's size). The script is a report: it exits 0
whatever the ratios are.
"""

import argparse
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from bench_support import machine_load, memory_lines, run_polled, run_record, simulate_command
from composition_bench import BENCH_DIR, compile_reference

from pipeline.composition.job import ROUND_EV
from pipeline.storage import Store

TARGET = 1.25
SEED = 3


def c_reference_seconds(binary: Path, compositions: int) -> tuple[float, float]:
    """Wall seconds of two C processes evaluating `compositions` between them; their mean cards."""
    half = -(-compositions // 2)
    started = time.perf_counter()
    processes = [subprocess.Popen([str(binary), "bench", str(half), str(seed)], stdout=subprocess.PIPE, text=True)
                 for seed in (1, 2)]
    outputs = [process.communicate()[0] for process in processes]
    seconds = time.perf_counter() - started
    means = [float(re.search(r"mean_cards=([0-9.]+)", output).group(1)) for output in outputs]
    return seconds, sum(means) / len(means)


def composition_run(shoes: int, rules: str, workdir: Path) -> dict:
    """Deal a run (not timed), then time the composition job over it, polling memory."""
    out, run_id = str(workdir / f"out-{shoes}"), f"{rules}-{shoes}"
    subprocess.run(simulate_command(shoes, SEED, out, run_id, "--rules", rules), check=True,
                   stdout=subprocess.DEVNULL)
    seconds, peaks = run_polled(["baccarat", "composition", "--run-id", run_id, "--out", out, "--master", "local[2]"],
                                workdir / f"composition-{shoes}.log")
    unseen = Store.parse(out).read_rows(ROUND_EV, [run_id])["unseen_cards"]
    return {"seconds": seconds, "peaks": peaks, "rounds": run_record(out, run_id)["rounds"],
            "mean_cards": sum(unseen.to_pylist()) / len(unseen)}


def peak_mb(peaks: dict) -> float:
    return max(kb for _, kb in peaks.values()) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shoes", type=int, default=10_000)
    parser.add_argument("--rules", default="ez_baccarat")
    parser.add_argument("--bench-dir", type=Path, default=BENCH_DIR)
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="composition-job-bench-"))
    try:
        print(machine_load(), flush=True)
        small = composition_run(args.shoes // 5, args.rules, workdir)
        full = composition_run(args.shoes, args.rules, workdir)
        binary = compile_reference(args.bench_dir, workdir)
        c_seconds, c_cards = c_reference_seconds(binary, full["rounds"])
        print(machine_load())
        ratio = full["seconds"] / c_seconds
        print(f"composition job  {args.shoes:,} shoes of {args.rules}  {full['rounds']:,} rounds "
              f"(mean {full['mean_cards']:.1f} unseen cards)  {full['seconds']:.1f} s wall, local[2]")
        print(f"C reference      {full['rounds']:,} compositions in 2 processes (mean {c_cards:.1f} cards)  "
              f"{c_seconds:.1f} s wall")
        print(f"time ratio job / C  {ratio:.2f}  (target <= {TARGET})  {'PASS' if ratio <= TARGET else 'FAIL'}")
        print(f"peak memory per process: {peak_mb(small['peaks']):,.0f} MB with {args.shoes // 5:,} shoes, "
              f"{peak_mb(full['peaks']):,.0f} MB with {args.shoes:,}; the full run's processes:")
        print("\n".join(memory_lines(full["peaks"])))
    finally:
        if args.keep:
            print(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
