"""Speed report for `baccarat risk`: the exact chain solved to a proven bound, in process.

    python benchmarks/risk_bench.py

Measures, best of three each (and the CPU time of one, which a loaded machine skews less): the exact per-round distribution of a bet (composition counting of
punto banco's 8-deck shoe), then `risk` itself for each case below, and `baccarat risk` as a command
(a fresh process: imports, the distribution and the solution). Target: a bankroll of 1,000 units and a
goal of 1,000 in under 1 s. The script is a report: it exits 0.

Measured on a machine shared with other work (load average 9.7 on 2 cores; see docs/measurements.md):
the whole command 0.646 s best of three, 0.770 s of CPU, its imports alone 0.397 s.
"""

import resource
import subprocess
import sys
import time
from fractions import Fraction

from bench_support import best_of_three, machine_load

from pipeline.risk import RiskQuestion, net_distribution, risk
from pipeline.rule_sets import load_rule_set

TARGET_SECONDS = 1.0
IMPORT_CLI = [sys.executable, "-c", "import pipeline.cli"]
CASES = [  # bet, system, bankroll, goal, table maximum (units)
    ("player", "flat", 1000, 1000, None),
    ("banker", "flat", 1000, 1000, None),
    ("player", "martingale", 1000, 1000, 512),
    ("player", "martingale", 1000, 1000, 32),
    ("banker", "martingale", 100, 100, 512),
    ("banker", "martingale", 300, 300, 512),
]


def main() -> None:
    print(machine_load())
    rule_set = load_rule_set("punto_banco")
    distributions = {bet: net_distribution(rule_set, bet) for bet in ("player", "banker")}
    print(f"exact distribution of one bet: {best_of_three(lambda: net_distribution(rule_set, 'banker')):.3f} s")
    for bet, system, bankroll, goal, table_max in CASES:
        question = RiskQuestion(bet, system, Fraction(bankroll), Fraction(goal),
                                None if table_max is None else Fraction(table_max))
        seconds = best_of_three(lambda: risk(question, distributions[bet]))
        processor = time.process_time()
        answer = risk(question, distributions[bet])
        processor = time.process_time() - processor
        limit = "" if table_max is None else f", table maximum {table_max}"
        print(f"{system} on {bet}, {bankroll} -> +{goal} units{limit}: {seconds:.3f} s ({processor:.3f} s of CPU), "
              f"{answer.lattice_states:,} states, P(goal) = {float(answer.goal_reached.value):.6g} "
              f"(bound {float(answer.goal_reached.error):.0e})")
    command = [sys.executable, "-m", "pipeline.cli", "risk", "--bet", "banker", "--bankroll", "1000", "--goal", "1000",
               "--json"]
    seconds = best_of_three(lambda: subprocess.run(command, check=True, capture_output=True))
    verdict = "within" if seconds <= TARGET_SECONDS else "OVER"
    print(f"`baccarat risk --bet banker --bankroll 1000 --goal 1000`, the whole command: {seconds:.3f} s, "
          f"{_processor_seconds(command):.3f} s of CPU ({verdict} the {TARGET_SECONDS:g} s target); its imports "
          f"alone: {best_of_three(lambda: subprocess.run(IMPORT_CLI, check=True, capture_output=True)):.3f} s")


def _processor_seconds(command: list[str]) -> float:
    """The CPU time of one run of `command`, in a process of its own."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


if __name__ == "__main__":
    main()
