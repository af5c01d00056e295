"""Speed of the composition kernel against the plain C reference, on the same compositions, one core.

Run from the repository root (a minute; do not run other heavy work meanwhile):

    python benchmarks/composition_bench.py [--compositions 5000] [--seed 1] [--bench-dir ../shared/bench]

The reference is c_exact_ev.c in the nearest shared/bench above the repository (or --bench-dir),
compiled with gcc -O2 and run as `c_exact_ev bench N SEED`: N random partial 8-deck shoes (0..400 cards removed)
evaluated one after another, 8 bets from the rank counts. This script rebuilds the C program's
compositions itself (the same xoshiro256** stream, Fisher-Yates and removals, following each card so
that the suits are known too), checks that they are the C program's (their mean size, and the C
program's EVs of the first few against the kernel's), and times round_evs over all of them on one
core (numba without threads), computing every bet of each rule set, plus a table with all ten bet
kinds (more than the C program's eight). Target: kernel rate / C rate >= 1.0, on CPU time (the
machine is shared; wall-clock figures follow for information). The script is a report: it exits 0
whatever the ratios are.
"""

import argparse
import json
import re
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
from bench_support import machine_load, shared_bench_folder
from numba import njit

from pipeline.bets import BET_KINDS
from pipeline.cards import CARDS_PER_DECK, RANKS, SUITS
from pipeline.composition.kernel import round_evs
from pipeline.rule_sets import RuleSet, load_rule_set

BENCH_DIR = shared_bench_folder()
TARGET = 1.0
SHOE_DECKS, MOST_REMOVED = 8, 400
CHECKED = 20  # compositions whose EVs the C program's `eval` prints, compared with the kernel's
# The C program's bets, with its payouts, as the names of the kernel's columns.
C_BETS = {"ev_player": "player", "ev_banker": "banker", "ev_tie": "tie", "ev_dragon7": "dragon_7",
          "ev_panda8": "panda_8", "ev_super6": "super_six", "ev_player_pair": "player_pair",
          "ev_banker_pair": "banker_pair"}
EVERY_BET = {"player": {"pays": "1"}, "banker": {"pays": "0.95"}, "tie": {"pays": "8"},
             "super_six": {"pays": "12"}, "dragon_7": {"pays": "40"}, "panda_8": {"pays": "25"},
             "player_pair": {"pays": "11"}, "banker_pair": {"pays": "11"}, "either_pair": {"pays": "5"},
             "perfect_pair": {"pays": "25"}}
_MASK32 = np.uint64(0xFFFFFFFF)


@njit(inline="always")
def _splitmix(x):
    x += np.uint64(0x9E3779B97F4A7C15)
    z = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x, z ^ (z >> np.uint64(31))


@njit(inline="always")
def _rotl(x, k):
    return (x << np.uint64(k)) | (x >> np.uint64(64 - k))


@njit(inline="always")
def _next(s):
    result = _rotl(s[1] * np.uint64(5), 7) * np.uint64(9)
    t = s[1] << np.uint64(17)
    s[2] ^= s[0]
    s[3] ^= s[1]
    s[1] ^= s[2]
    s[0] ^= s[3]
    s[2] ^= t
    s[3] = _rotl(s[3], 45)
    return result


@njit(inline="always")
def _bounded(s, n):
    """The C program's Lemire bound: the LOW 32 bits of each output times n."""
    bound = np.uint64(n)
    m = (_next(s) & _MASK32) * bound
    if (m & _MASK32) < bound:
        floor = ((np.uint64(1) << np.uint64(32)) - bound) % bound
        while (m & _MASK32) < floor:
            m = (_next(s) & _MASK32) * bound
    return m >> np.uint64(32)


@njit(cache=True)
def c_bench_compositions(n, seed):
    """int64[n, 52]: the compositions `c_exact_ev bench n seed` evaluates, by card code.

    The C program's shoe holds card k = deck * 52 + suit * 13 + rank (it keeps only the rank);
    its code here is rank * 4 + suit.
    """
    s = np.empty(4, dtype=np.uint64)
    x = np.uint64(seed)
    for k in range(4):
        x, s[k] = _splitmix(x)
    size = SHOE_DECKS * CARDS_PER_DECK
    shoe = np.arange(size)
    out = np.zeros((n, CARDS_PER_DECK), dtype=np.int64)
    for c in range(n):
        for i in range(size - 1, 0, -1):
            j = np.int64(_bounded(s, i + 1))
            shoe[i], shoe[j] = shoe[j], shoe[i]
        removed = np.int64(_bounded(s, MOST_REMOVED + 1))
        for i in range(removed, size):
            card = shoe[i] % CARDS_PER_DECK
            out[c, (card % RANKS) * SUITS + card // RANKS] += 1
    return out


def rank_counts(codes: np.ndarray) -> list[int]:
    return codes.reshape(RANKS, SUITS).sum(axis=1).tolist()


def compile_reference(bench_dir: Path, workdir: Path) -> Path:
    binary = workdir / "c_exact_ev"
    subprocess.run(["gcc", "-O2", "-o", str(binary), str(bench_dir / "c_exact_ev.c")], check=True)
    return binary


def c_reference(binary: Path, n: int, seed: int) -> dict[str, float]:
    line = subprocess.run([str(binary), "bench", str(n), str(seed)], check=True, capture_output=True,
                          text=True).stdout
    print(line.strip(), flush=True)
    return {key: float(re.search(rf"\b{key}=([0-9.e+]+)", line).group(1))
            for key in ("mean_cards", "evaluations_per_s", "cpu_evaluations_per_s")}


def check_same_compositions(binary: Path, compositions: np.ndarray, c_mean_cards: float) -> None:
    """The rebuilt compositions are the C program's: same mean size, same EVs where both compute them."""
    mean_cards = compositions.sum(axis=1).mean()
    if abs(mean_cards - c_mean_cards) > 0.05:  # the C program prints one decimal
        raise SystemExit(f"rebuilt compositions hold {mean_cards:.1f} cards on average, the C program's "
                         f"{c_mean_cards}: not the same compositions")
    kernel = round_evs(every_bet(), compositions[:CHECKED])
    columns = list(EVERY_BET)
    worst = 0.0
    for codes, evs in zip(compositions[:CHECKED], kernel):
        c_out = json.loads(subprocess.run([str(binary), "eval", *map(str, rank_counts(codes))], check=True,
                                          capture_output=True, text=True).stdout)
        worst = max(worst, *(abs(c_out[name] - evs[columns.index(kind)]) for name, kind in C_BETS.items()))
    print(f"same compositions: mean {mean_cards:.1f} cards; the C program's 8 EVs of the first {CHECKED} "
          f"differ from the kernel's by at most {worst:.1e}", flush=True)
    if worst > 1e-12:
        raise SystemExit("the kernel and the C program disagree on the same compositions")


def every_bet() -> RuleSet:
    """A table offering every bet kind (the C program's eight at its payouts, and the two others)."""
    assert set(EVERY_BET) == set(BET_KINDS)
    return RuleSet.model_validate({**load_rule_set("punto_banco").model_dump(), "name": "every_bet",
                                   "bets": EVERY_BET})


def kernel_rates(rule_set: RuleSet, compositions: np.ndarray) -> tuple[float, float]:
    """(CPU, wall) compositions/s of round_evs over every composition, after a warm-up call."""
    round_evs(rule_set, compositions[:10])
    cpu, wall = time.process_time(), time.perf_counter()
    round_evs(rule_set, compositions)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return len(compositions) / cpu, len(compositions) / wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compositions", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--bench-dir", type=Path, default=BENCH_DIR, help="folder holding c_exact_ev.c")
    parser.add_argument("--repeats", type=int, default=3, help="C and kernel timed in turn; medians reported")
    args = parser.parse_args()
    print(machine_load(), flush=True)
    rule_sets = (load_rule_set("ez_baccarat"), load_rule_set("punto_banco"), every_bet())
    with tempfile.TemporaryDirectory(prefix="composition-bench-") as workdir:
        binary = compile_reference(args.bench_dir, Path(workdir))
        compositions = c_bench_compositions(args.compositions, args.seed)
        c_runs, kernel_runs = [], []
        for _ in range(args.repeats):
            c_runs.append(c_reference(binary, args.compositions, args.seed))
            kernel_runs.append([kernel_rates(rule_set, compositions) for rule_set in rule_sets])
        check_same_compositions(binary, compositions, c_runs[0]["mean_cards"])
    c_cpu = float(np.median([run["cpu_evaluations_per_s"] for run in c_runs]))
    c_wall = float(np.median([run["evaluations_per_s"] for run in c_runs]))
    print(f"\nmedians of {args.repeats} runs, {args.compositions:,} compositions, one core")
    for column, rule_set in enumerate(rule_sets):
        cpu, wall = np.median([run[column] for run in kernel_runs], axis=0)
        ratio = cpu / c_cpu
        print(f"{rule_set.name:<12} {len(rule_set.bets):>2} bets  kernel {cpu:>7,.0f}/s CPU ({wall:>7,.0f}/s wall)  "
              f"C {c_cpu:>6,.0f}/s CPU ({c_wall:>6,.0f}/s wall)  ratio {ratio:.2f} CPU, {wall / c_wall:.2f} wall  "
              f"(target >= {TARGET:.1f} CPU)  {'PASS' if ratio >= TARGET else 'FAIL'}", flush=True)
    print(machine_load())


if __name__ == "__main__":
    main()
