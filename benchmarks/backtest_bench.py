"""Speed of playing 10 betting systems over a run against `simulate` of that run, measured in one run.

Run from the repository root (do not run other heavy work meanwhile):

    python benchmarks/backtest_bench.py [--shoes 20000] [--job] [--job-only] [--keep]

1. `baccarat simulate --master local[2]` deals --shoes shoes, wall clock from the command's start.
2. The run's rounds read with pyarrow (the columns a backtest needs), then pipeline/session_kernel.py's
   play_sessions for each system over every round, in this one process (after one small call that
   loads the compiled kernel, timed apart).
3. With --job, `baccarat backtest --master local[2]` over the same run and systems, wall clock (said in
   one line, and skipped, when the command does not exist yet). --job-only skips step 2 (whose own read
   of the rounds is slow at a million shoes) and times the job alone against simulate.

Target (10 systems over 1,000,000 shoes on local[2]): the backtest at most 2x simulate. The
script is a report: it exits 0 whatever the ratios are.

Measured with --job on a machine shared with other work (load average 7 to 17 on 2 cores; see
docs/measurements.md): 100,000 shoes, simulate 44.1 s, the kernel in one process 33.8 s, the backtest
80.8 s = 1.83x (the look-back design before it: 10.69x); 1,000,000 shoes under heavier load during
the backtest than during simulate: 174.0 s, 589.1 s, 1,093.0 s = 6.28x (not a verdict on the target).
With --job-only on a quiet machine, after the kernel was made faster: 1,000,000 shoes, simulate 66.3 s
and 34.5 s, the backtest 122.4 s and 110.2 s: 1.85x and 3.19x (the machine's speed drifts; see
docs/measurements.md).
After the session state was kept in registers and each task read its rounds once (side by side with
the code before, load average 10 to 19, so in CPU seconds of the process and its descendants): 100,000
shoes, simulate 29.8 s of CPU, the backtest 26.9 s (0.90x) against 38.1 s (1.28x) before; the kernel
39 ns per round and system against 110 to 137 ns. A million shoes, quiet (load under 2), within a minute:
simulate 36.3 s, the backtest 63.0 s = 1.74x (within the target; before: 136.4 s at load 2.4).
"""

import argparse
import subprocess
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from bench_support import (machine_load, run_polled, run_record, scratch_folder, simulate_command,
                           warm_driver_archive)

from pipeline.session_kernel import play_sessions
from pipeline.storage import Store
from pipeline.systems import load_system

TARGET = 2.0
SEED = 21
SYSTEMS = ("flat_banker", "flat_player", "martingale_player_32", "martingale_banker", "paroli_player",
           "one_three_two_six_banker", "dalembert_banker", "fibonacci_player", "follow_the_shoe",
           "big_road_column")
BETS = ("banker", "player")
WINNER_CODES = {"B": 0, "P": 1, "T": 2}


def read_rounds(out: str, run_id: str) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """shoe_id, winner codes and the nets in hundredths of every round, in run order."""
    store = Store.parse(out)
    paths = [store.reader_path(entry.path) for entry in run_record(out, run_id).files_of("rounds")]
    columns = ["shoe_id", "round", "outcome", *(f"net_{bet}" for bet in BETS)]
    table = pa.concat_tables(pq.read_table(path, columns=columns) for path in paths)
    table = table.sort_by([("shoe_id", "ascending"), ("round", "ascending")])
    winners = np.zeros(table.num_rows, dtype=np.int8)
    outcome = table["outcome"].to_numpy(zero_copy_only=False)
    for code, value in WINNER_CODES.items():
        winners[outcome == code] = value
    nets = {bet: pc.cast(pc.multiply(table[f"net_{bet}"], pa.scalar(100)), pa.int64()).to_numpy()
            for bet in BETS}
    return table["shoe_id"].to_numpy(), winners, nets


def kernel_seconds(rounds) -> tuple[float, float, int]:
    """The compiled kernel's load time, then every system over every round: seconds and sessions."""
    shoe_ids, winners, nets = rounds
    started = time.perf_counter()
    play_sessions(load_system(SYSTEMS[0]), shoe_ids[:100], winners[:100], {b: n[:100] for b, n in nets.items()},
                  0, 100)
    loading = time.perf_counter() - started
    systems = [load_system(name) for name in SYSTEMS]
    started, sessions = time.perf_counter(), 0
    for system in systems:
        sessions += len(play_sessions(system, shoe_ids, winners, nets, 0, len(winners))["start"])
    return loading, time.perf_counter() - started, sessions


def job_seconds(out: str, run_id: str, log: Path) -> float | None:
    """`baccarat backtest` over the run, or None when the command does not exist."""
    if subprocess.run(["baccarat", "backtest", "--help"], capture_output=True).returncode != 0:
        return None
    command = ["baccarat", "backtest", "--run-id", run_id, "--systems", ",".join(SYSTEMS), "--out", out,
               "--master", "local[2]"]
    return run_polled(command, log)[0]


def report_kernel(out: str, run_id: str, simulated: float) -> None:
    started = time.perf_counter()
    rounds = read_rounds(out, run_id)
    reading = time.perf_counter() - started
    loading, playing, sessions = kernel_seconds(rounds)
    print(f"read {len(rounds[1]):,} rounds with pyarrow: {reading:.1f} s; the kernel loaded in {loading:.1f} s")
    print(f"{len(SYSTEMS)} systems, {sessions:,} sessions in one process: {playing:.1f} s, "
          f"{playing / simulated:.2f}x simulate (with the read: {(playing + reading) / simulated:.2f}x; "
          f"target for the whole backtest <= {TARGET:g}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shoes", type=int, default=20_000)
    parser.add_argument("--job", action="store_true", help="also time `baccarat backtest` over the run")
    parser.add_argument("--job-only", action="store_true", help="time simulate and the job, not the kernel alone")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = parser.parse_args()
    print(machine_load())
    with scratch_folder("backtest_bench_", args.keep) as workdir:
        warm_driver_archive(workdir)
        out, run_id = str(workdir / "data"), f"backtest-bench-{args.shoes}"
        simulated, _ = run_polled(simulate_command(args.shoes, SEED, out, run_id), workdir / "simulate.log")
        print(f"simulate {args.shoes:,} shoes on local[2]: {simulated:.1f} s")
        if not args.job_only:
            report_kernel(out, run_id, simulated)
        if args.job or args.job_only:
            backtest = job_seconds(out, run_id, workdir / "backtest.log")
            if backtest is None:
                print("`baccarat backtest` does not exist in this checkout: the job was not timed")
            else:
                verdict = "within" if backtest <= TARGET * simulated else "OVER"
                print(f"`baccarat backtest` of {len(SYSTEMS)} systems: {backtest:.1f} s, "
                      f"{backtest / simulated:.2f}x simulate ({verdict} the {TARGET:g}x target)")
        print(machine_load())


if __name__ == "__main__":
    main()
