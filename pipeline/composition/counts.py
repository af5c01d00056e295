"""Count systems as data: `conf/counts/<name>.yaml` (or any path) -> a validated CountSystem, and its
running and true counts before each round, from the unseen compositions.

Tags are given per baccarat rank A, 2 .. 9, T, where T stands for the tens and the faces alike (every
published baccarat count tags them the same). A count is kept from the cards a player sees, as the
information model says: the face-up burn card and the cards of earlier rounds.
"""

from typing import Annotated, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from pipeline.bets import BET_KINDS
from pipeline.cards import ALL_CODES, CARDS_PER_DECK, MAX_INITIAL_COUNT, MAX_TAG, rank
from pipeline.config_files import NAME, known_names, locate, read_yaml, validation_problems
from pipeline.errors import BaccaratError
from pipeline.rule_sets import RuleSet

RANK_LABELS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "T")
Number = Annotated[float, Field(strict=True, allow_inf_nan=False)]
Tag = Annotated[Number, Field(ge=-MAX_TAG, le=MAX_TAG)]
InitialCount = Annotated[Number, Field(ge=-MAX_INITIAL_COUNT, le=MAX_INITIAL_COUNT)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BetUse(_Strict):
    """What the count is meant for on one bet: which way of the true count favours the bet, and the
    source's trigger, if it gives one (bet at a true count >= trigger when `high`, <= when `low`)."""

    favourable_when: Literal["high", "low"]
    trigger: Number | None = None


class CountSystem(_Strict):
    name: Annotated[str, Field(pattern=NAME.pattern)]
    description: str = ""
    source: Annotated[str, Field(min_length=1)]
    tags: dict[str, Tag]
    balanced: bool
    initial_running_count: InitialCount | None = None  # required for an unbalanced count; 0 for a balanced one
    true_count: Literal["per_deck_unseen", "running"]  # running * 52 / unseen_cards, or the running count
    bets: Annotated[dict[str, BetUse], Field(min_length=1)]

    @field_validator("tags", mode="before")
    @classmethod
    def _ranks(cls, tags):
        if not isinstance(tags, dict):
            return tags
        tags = {str(rank_label): tag for rank_label, tag in tags.items()}  # YAML reads 2 .. 9 as numbers
        if unknown := [label for label in tags if label not in RANK_LABELS]:
            raise ValueError(f"unknown rank {unknown[0]!r} (ranks: {' '.join(RANK_LABELS)}; T stands for "
                             "tens and faces)")
        if missing := [label for label in RANK_LABELS if label not in tags]:
            raise ValueError(f"no tag for rank {', '.join(missing)}")
        return tags

    @model_validator(mode="after")
    def _consistent(self) -> "CountSystem":
        if unknown := [kind for kind in self.bets if kind not in BET_KINDS]:
            raise ValueError(f"unknown bet kind {unknown[0]!r} (known: {', '.join(BET_KINDS)})")
        deck_total = float(self.code_tags().sum())
        if self.balanced != (deck_total == 0):
            raise ValueError(f"balanced is {str(self.balanced).lower()}, but the tags of one deck sum to "
                             f"{deck_total:g}")
        if self.balanced and self.initial_running_count not in (None, 0):
            raise ValueError("a balanced count starts at 0: drop initial_running_count")
        if not self.balanced and self.initial_running_count is None:
            raise ValueError("an unbalanced count needs initial_running_count (for a full shoe)")
        return self

    def code_tags(self) -> np.ndarray:
        """The tag of each card code 0..51."""
        by_rank = [self.tags[RANK_LABELS[min(r, 10) - 1]] for r in rank(ALL_CODES).tolist()]
        return np.array(by_rank, dtype=np.float64)

    def running_counts(self, compositions: np.ndarray, decks: int) -> np.ndarray:
        """Before each round: the initial count plus the tags of every card seen (the shoe's cards less
        the unseen ones of `compositions`, one row of 52 counts per round)."""
        seen = decks - compositions.astype(np.float64)
        return (self.initial_running_count or 0.0) + seen @ self.code_tags()

    def true_counts(self, running: np.ndarray, unseen_cards: np.ndarray) -> np.ndarray:
        if self.true_count == "running":
            return running.copy()
        return running * CARDS_PER_DECK / unseen_cards


def known_count_systems() -> list[str]:
    return known_names("counts")


def load_count_system(name_or_path: str) -> CountSystem:
    """A shipped count system by name, or a YAML file by path."""
    source = locate("counts", name_or_path, "count system")
    what = f"count system {name_or_path!r}"
    try:
        return CountSystem.model_validate(read_yaml(source, what))
    except ValidationError as error:
        raise BaccaratError(f"{what}: {validation_problems(error)}") from None


def offered(system: CountSystem, rule_set: RuleSet) -> bool:
    return all(kind in rule_set.bets for kind in system.bets)


def count_systems_for(rule_set: RuleSet, names: str | None) -> tuple[CountSystem, ...]:
    """The count systems of `names` (comma-separated names or paths), each meant for bets the rule set
    offers; by default every shipped system whose bets it offers. A one-line error otherwise. In name
    order, whatever the order given: the rows, and the content key a rerun compares, do not depend on it."""
    if names is None:
        return tuple(system for system in map(load_count_system, known_count_systems()) if offered(system, rule_set))
    wanted = [name.strip() for name in names.split(",")]
    if "" in wanted:
        raise BaccaratError(f"--counts {names!r}: an empty name (give NAME,NAME,... of conf/counts or .yaml paths)")
    systems = tuple(load_count_system(name) for name in wanted)
    seen = set()
    for given, system in zip(wanted, systems):
        if system.name in seen:
            raise BaccaratError(f"--counts names the count system {system.name!r} twice")
        seen.add(system.name)
        if given != system.name and system.name in known_count_systems() and system != load_count_system(system.name):
            raise BaccaratError(f"count system {given!r} is named {system.name!r}, like a shipped one it differs "
                                "from: rename it, so that its columns are not taken for the shipped system's")
        if lacking := [kind for kind in system.bets if kind not in rule_set.bets]:
            raise BaccaratError(f"count system {given!r} is meant for {lacking[0]}, which rule set "
                                f"{rule_set.name!r} does not offer (it offers {', '.join(rule_set.bets)})")
    return tuple(sorted(systems, key=lambda system: system.name))
