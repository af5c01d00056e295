"""Speed report for baccarat banque's exact values, in process, against the exact odds of punto banco.

    python benchmarks/banque_bench.py

Measures in the same session, best of three each (after one compilation of the counter):
- the reference: `exact_odds` of punto banco with 6 decks (composition counting, every bet);
- counting every deal of a banque shoe (`count_shoe`) for 3, 6 and 8 decks;
- the value of the default profile from a counted 6-deck shoe (the maximising Banker's table, then
  the value), as `baccarat odds --rules banque --decks 6` computes it, and from the infinite deck.
Target: each within 10x the reference. The script is a report: it exits 0.
"""

from bench_support import machine_load
from solve_bench import RATIO_TARGET, best_of_three

from pipeline.exact import exact_odds
from pipeline.games.banque import (
    DEFAULT_POLICY,
    banque_value,
    load_policy,
    player_strategies,
    profile_of,
)
from pipeline.games.banque_counts import count_shoe, finite_gains, shoe_value
from pipeline.games.value import INFINITE
from pipeline.rule_sets import load_rule_set


def report(what: str, seconds: float, reference: float) -> None:
    verdict = "within" if seconds <= RATIO_TARGET * reference else "OVER"
    print(f"{what}: {seconds:.3f} s, {seconds / reference:.2f}x the reference ({verdict} the {RATIO_TARGET:g}x target)")


def main() -> None:
    print(machine_load())
    reference = best_of_three(lambda: exact_odds(load_rule_set("punto_banco", 6)))
    print(f"reference: exact odds of punto banco, 6 decks: {reference:.3f} s")
    banque = load_rule_set("banque")
    count_shoe(banque.draw, 1)  # the first call compiles the loop
    for decks in (3, 6, 8, INFINITE):
        shoe = "infinite deck" if decks == INFINITE else f"{decks} decks"
        report(f"banque: every deal of {shoe} counted", best_of_three(lambda decks=decks: count_shoe(banque.draw, decks)), reference)
    policy, strategies = load_policy(DEFAULT_POLICY), player_strategies(banque, None)
    counts = count_shoe(banque.draw, 6)

    def finite_profile_value():
        shoe_value(counts, profile_of(banque, policy, strategies, finite_gains(counts)))

    report("banque: the default profile's value from the counted 6-deck shoe", best_of_three(finite_profile_value),
           reference)
    report("banque: the default profile's value, infinite deck (Fractions)",
           best_of_three(lambda: banque_value(profile_of(banque, policy, strategies))), reference)


if __name__ == "__main__":
    main()
