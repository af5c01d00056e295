"""Speed report for the chemin de fer solver, in process, against the exact odds of punto banco.

    python benchmarks/solve_bench.py

Measures in the same session, best of three each:
- the reference: `exact_odds` of punto banco with 6 decks (composition counting, every bet);
- for each model: counting every deal (`count_deals`) and solving (`solve`), as `baccarat solve` does.
Target: every finite-shoe model, 6 and 8 decks with the Banker seeing his cards included, within
10x the reference (a few seconds on a loaded laptop core). The script is a report: it exits 0.
"""

from fractions import Fraction

from bench_support import best_of_three, machine_load

from pipeline.exact import exact_odds
from pipeline.games.solve import solve
from pipeline.games.value import INFINITE, count_deals
from pipeline.rule_sets import load_rule_set

RATIO_TARGET = 10.0
MODELS = [  # (rules, decks, the Banker sees, commission)
    ("chemin_de_fer_parlor", INFINITE, "total", Fraction(0)),
    ("chemin_de_fer_parlor", 6, "total", Fraction(0)),
    ("chemin_de_fer_parlor", 6, "cards", Fraction(0)),
    ("chemin_de_fer_parlor", 8, "cards", Fraction(0)),
    ("chemin_de_fer", 6, "cards", Fraction(1, 20)),
]


def main() -> None:
    print(machine_load())
    punto = load_rule_set("punto_banco", 6)
    reference = best_of_three(lambda: exact_odds(punto))
    print(f"reference: exact odds of punto banco, 6 decks: {reference:.3f} s")
    for rules, decks, sees, commission in MODELS:
        draw = load_rule_set(rules).draw
        seconds = best_of_three(lambda: solve(count_deals(draw, decks), draw, sees, commission))
        verdict = "within" if seconds <= RATIO_TARGET * reference else "OVER"
        shoe = "infinite deck" if decks == INFINITE else f"{decks} decks"
        print(f"{rules}, {shoe}, Banker sees {sees}, commission {commission}: {seconds:.3f} s, "
              f"{seconds / reference:.2f}x the reference ({verdict} the {RATIO_TARGET:g}x target)")


if __name__ == "__main__":
    main()
