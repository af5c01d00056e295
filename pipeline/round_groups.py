"""A one-hand run's rounds by outcome, streak index and net cents of each bet, as its simulation tasks
counted them while dealing (the `round_groups` column of `runs`): what prep_round_groups.sql would
compute from every round, kept so that the marts need not read every round's nets a second time.
Rows are [outcome, streak_index, rounds, *cents], the cents in the order of the rule set's bets."""

import json
from collections import Counter
from collections.abc import Iterable

RoundGroups = tuple[tuple, ...]


def merged_round_groups(parts: Iterable[list[list]]) -> RoundGroups:
    """Every task's rows as one: the rounds of equal outcome, streak index and nets added up."""
    rounds: Counter = Counter()
    for rows in parts:
        for outcome, streak, count, *cents in rows:
            rounds[(outcome, streak, *cents)] += count
    return tuple((outcome, streak, count, *cents) for (outcome, streak, *cents), count in sorted(rounds.items()))


def round_groups_json(groups: RoundGroups | None) -> str | None:
    return None if groups is None else json.dumps([list(row) for row in groups], separators=(",", ":"))


def parsed_round_groups(text: str | None, bets: int) -> RoundGroups | None:
    """The column's rows, each checked (a ValueError names what is malformed); None for a run without them."""
    if text is None:
        return None
    rows = json.loads(text)
    if not isinstance(rows, list) or not all(_well_formed(row, bets) for row in rows):
        raise ValueError(f"round_groups is not a list of [outcome, streak_index, rounds, {bets} net cents]")
    return tuple(tuple(row) for row in rows)


def _well_formed(row, bets: int) -> bool:
    return (isinstance(row, list) and len(row) == 3 + bets and row[0] in ("B", "P", "T")
            and all(type(value) is int for value in row[1:]) and row[1] >= 0 and row[2] > 0)


def round_groups_problem(groups: RoundGroups | None, outcomes: dict[str, int]) -> str | None:
    """Why the rows disagree with a runs row's rounds of each outcome (`outcomes`), or None."""
    if groups is None:
        return None
    counted = {outcome: 0 for outcome in outcomes}
    for outcome, _, rounds, *_ in groups:
        counted[outcome] += rounds
    if counted != outcomes:
        return f"its runs row records {outcomes} rounds of each outcome, its round groups {counted}"
    return None
