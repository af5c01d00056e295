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
runs (a task holds one batch of shoes, whatever the run's size).

4. The anchors, from the full run's marts (`baccarat marts`): full-shoe EVs against `baccarat odds`
   for every fixed-tableau rule set; the share of rounds with more than 52 unseen cards whose Player
   or Banker EV is positive; perfect play's expected units per shoe on Dragon 7 and Panda 8 beside
   Jacobson's counts at his triggers and at their best triggers (his published 0.597 and 0.237).

The script is a report: it exits 0 whatever the ratios are.
"""

import argparse
import json
import re
import subprocess
import time
from pathlib import Path

import duckdb
import numpy as np
from bench_support import (
    composition_command,
    machine_load,
    memory_lines,
    run_polled,
    run_record,
    scratch_folder,
    simulate_command,
    warm_driver_archive,
)
from composition_bench import BENCH_DIR, compile_reference

from pipeline.cards import CARDS_PER_DECK
from pipeline.composition.job import ROUND_EV
from pipeline.composition.kernel import round_evs
from pipeline.rule_sets import fixed_tableau_rule_sets, load_rule_set
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
    seconds, peaks = run_polled(composition_command(run_id, out), workdir / f"composition-{shoes}.log")
    unseen = Store.parse(out).read_rows(ROUND_EV, [run_id])["unseen_cards"]
    return {"seconds": seconds, "peaks": peaks, "rounds": run_record(out, run_id).rounds,
            "mean_cards": sum(unseen.to_pylist()) / len(unseen), "out": out, "run_id": run_id}


def full_shoe_differences() -> dict[str, float]:
    """For each fixed-tableau rule set, the largest |kernel EV - baccarat odds EV| on its full shoe."""
    differences = {}
    for name in fixed_tableau_rule_sets():
        rule_set = load_rule_set(name)
        odds = json.loads(subprocess.run(["baccarat", "odds", "--rules", name, "--json"], check=True,
                                         capture_output=True, text=True).stdout)
        kernel = round_evs(rule_set, np.full((1, CARDS_PER_DECK), rule_set.decks))[0]
        differences[name] = max(abs(ev - odds["bets"][kind]["ev"]) for kind, ev in zip(rule_set.bets, kernel))
    return differences


JACOBSON = {"dragon_7": ("jacobson_dragon_7", 4, 0.597), "panda_8": ("jacobson_panda_8", 11, 0.237)}


def anchor_lines(run: dict, workdir: Path) -> list[str]:
    """The anchors (4. above), read from the run's marts in its warehouse."""
    warehouse = workdir / "anchors.duckdb"
    subprocess.run(["baccarat", "marts", "--out", run["out"], "--run-id", run["run_id"], "--warehouse",
                    str(warehouse)], check=True, stdout=subprocess.DEVNULL)
    lines = [f"full shoe, {name}: largest |kernel EV - baccarat odds EV| = {difference:.1e}"
             for name, difference in full_shoe_differences().items()]
    with duckdb.connect(str(warehouse), read_only=True) as con:
        for bet in ("player", "banker"):
            rounds, positive = con.execute(
                "SELECT sum(rounds), sum(round(rounds * share_positive)) FROM advantage_by_depth "
                "WHERE bet = ? AND unseen_low > 52", [bet]).fetchone()
            lines.append(f"{bet}: {int(positive):,} of {int(rounds):,} rounds with more than 52 unseen cards have "
                         f"a positive EV ({positive / rounds:.4%})")
        for bet, (count, trigger, published) in JACOBSON.items():
            perfect = con.execute("SELECT expected_units_per_shoe FROM perfect_play WHERE bet = ?", [bet]).fetchone()[0]
            at_trigger = con.execute(
                "SELECT expected_units_per_shoe FROM count_efficiency WHERE count_system = ? AND bet = ? "
                "AND direction = 'high' AND trigger = ?", [count, bet, trigger]).fetchone()
            best = con.execute(
                "SELECT trigger, expected_units_per_shoe FROM count_efficiency WHERE count_system = ? AND bet = ? "
                "AND direction = 'high' ORDER BY expected_units_per_shoe DESC LIMIT 1", [count, bet]).fetchone()
            lines.append(f"{bet}: perfect play {perfect:.3f} units per shoe; {count} at +{trigger} "
                         f"{at_trigger[0] if at_trigger else float('nan'):.3f}, at its best trigger +{best[0]:g} "
                         f"{best[1]:.3f} (Jacobson published {published})")
    return lines


def peak_mb(peaks: dict) -> float:
    return max(kb for _, kb in peaks.values()) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shoes", type=int, default=10_000)
    parser.add_argument("--rules", default="ez_baccarat")
    parser.add_argument("--bench-dir", type=Path, default=BENCH_DIR)
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()
    with scratch_folder("composition-job-bench-", args.keep) as workdir:
        warm_driver_archive(workdir)
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
        print("anchors:")
        print("\n".join(f"  {line}" for line in anchor_lines(full, workdir)))


if __name__ == "__main__":
    main()
