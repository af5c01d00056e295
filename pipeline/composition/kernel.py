"""STAND-IN until the compiled kernel lands: exact EVs from compositions through pipeline.exact
(correct, about 0.2 s a composition). The lead replaces this file with the fast kernel at merge."""

import numpy as np

from pipeline.exact import exact_odds
from pipeline.tables import RuleSet


def round_evs(rule_set: RuleSet, compositions: np.ndarray) -> np.ndarray:
    """The exact EV per unit of each bet of the rule set (columns in rule_set.bets order), for each
    composition: a row of 52 counts of unseen cards per card code."""
    evs = np.empty((len(compositions), len(rule_set.bets)), dtype=np.float64)
    for row, composition in enumerate(compositions):
        odds = exact_odds(rule_set, composition.tolist())
        evs[row] = [float(odds.bets[kind].ev) for kind in rule_set.bets]
    return evs
