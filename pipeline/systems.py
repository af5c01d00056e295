"""Betting systems: `conf/systems/<name>.yaml` (or any path) -> a validated System.

A system says which bet to make each round, how the stake moves after a win, a loss or a push,
the table's limits, and the session it plays: see docs/betting-systems.md.
"""

import shlex
from decimal import Decimal
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Discriminator, Field, Tag, ValidationError, model_validator

from pipeline.bets import BET_KINDS
from pipeline.config_files import NAME, known_names, locate, validation_problems, read_yaml
from pipeline.errors import BaccaratError

# Sessions are played in 64-bit cents and kept as decimal(18,2) (schemas/sessions.yaml): a bound on every
# amount keeps a session's bankroll, winnings and stakes far inside both.
MAX_MONEY = Decimal(10**12)
# in plain digits: an amount given as 1e3 is 1000 in every message
Money = Annotated[Decimal, Field(gt=0, le=MAX_MONEY, decimal_places=2, allow_inf_nan=False),
                  AfterValidator(lambda amount: Decimal(format(amount, "f")))]
MAX_COUNT = 10**12  # a round limit or a Labouchère number: the session kernel holds them in 64-bit integers
Count = Annotated[int, Field(ge=1, le=MAX_COUNT, strict=True)]
SIDES = ("banker", "player")
SYSTEMS_PLAYED = "baccarat.systems"  # a sessions commit's record of each system's unit and bet as played
CHOOSERS = ("same_side", "follow_last_winner", "opposite_last_winner", "big_road_column", "derived_road_colour")
DERIVED_ROADS = {"big_eye_boy": 1, "small_road": 2, "cockroach_pig": 3}  # columns back they compare with
PROGRESSIONS = ("flat", "martingale", "paroli", "one_three_two_six", "dalembert", "fibonacci", "labouchere",
                "oscars_grind")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Chooser(_Strict):
    """A rule choosing Banker or Player each round from the shoe's results so far (ties ignored)."""

    choose: Literal[CHOOSERS]
    first: Literal[SIDES] = "banker"  # same_side's side; the others' side until their rule can decide
    road: Literal[tuple(DERIVED_ROADS)] | None = None  # derived_road_colour only

    @model_validator(mode="after")
    def _road_for_derived_only(self) -> "Chooser":
        if (self.choose == "derived_road_colour") != (self.road is not None):
            raise ValueError(f"road ({', '.join(DERIVED_ROADS)}) is given with choose: derived_road_colour "
                             "and only then")
        return self


class Progression(_Strict):
    """How the stake, in base units, moves from round to round."""

    kind: Literal[PROGRESSIONS]
    at_max: Literal["stay", "reset"] = "reset"  # a stake above the table maximum: bet the maximum, or start over
    paroli_wins: Annotated[int, Field(ge=1, le=10, strict=True)] = 3  # paroli: wins in a row before it starts over
    line: Annotated[tuple[Count, ...], Field(min_length=1)] = (1, 2, 3, 4)  # labouchere

    @model_validator(mode="after")
    def _own_options_only(self) -> "Progression":
        given = self.model_fields_set
        if "paroli_wins" in given and self.kind != "paroli":
            raise ValueError("paroli_wins is an option of the paroli progression only")
        if "line" in given and self.kind != "labouchere":
            raise ValueError("line is an option of the labouchere progression only")
        return self


class TableLimits(_Strict):
    minimum: Money
    maximum: Money


class Session(_Strict):
    """When a session stops: the first of goal, ruin, stop-loss and round limit (docs/betting-systems.md)."""

    bankroll: Money
    goal: Money  # stop once the bankroll is at least bankroll + goal
    stop_loss: Money | None = None  # stop once the bankroll is at most bankroll - stop_loss
    max_rounds: Count | None = None
    ties_count: bool = True  # whether a tie counts towards max_rounds
    span_shoes: bool = True  # whether a session goes on into the next shoe


# A bet kind by name, or a mapping that is a chooser: each gets only its own error messages.
BetChoice = Annotated[Annotated[str, Tag("kind")] | Annotated[Chooser, Tag("chooser")],
                      Discriminator(lambda value: "kind" if isinstance(value, str) else "chooser")]


class System(_Strict):
    name: Annotated[str, Field(pattern=NAME.pattern)]
    description: str = ""
    bet: BetChoice
    progression: Progression
    unit: Money
    table: TableLimits
    session: Session

    def played_terms(self) -> dict[str, str | None]:
        """Its unit and fixed bet (None: a chooser's), as a sessions commit records them (SYSTEMS_PLAYED)."""
        return {"unit": str(self.unit), "bet": self.bet if isinstance(self.bet, str) else None}

    @model_validator(mode="after")
    def _consistent(self) -> "System":
        if isinstance(self.bet, str) and self.bet not in BET_KINDS:
            raise ValueError(f"unknown bet kind {self.bet!r} (known: {', '.join(BET_KINDS)}; or a chooser: "
                             f"choose: {' | '.join(CHOOSERS)})")
        if self.table.minimum > self.unit:
            raise ValueError(f"the unit {self.unit} is below the table minimum {self.table.minimum}")
        if self.table.maximum < self.unit:
            raise ValueError(f"the table maximum {self.table.maximum} is below the unit {self.unit}")
        if self.session.bankroll < self.unit:
            raise ValueError(f"the bankroll {self.session.bankroll} cannot cover one stake of {self.unit}")
        stop_loss = self.session.stop_loss
        if stop_loss is not None and stop_loss > self.session.bankroll:
            raise ValueError(f"the stop-loss {stop_loss} is more than the bankroll {self.session.bankroll}")
        return self

    @property
    def sides(self) -> tuple[str, ...]:
        """The bet kinds this system may stake on."""
        return (self.bet,) if isinstance(self.bet, str) else SIDES

    def check_rules(self, bets: dict) -> "System":
        """Refuse, in one line, a system whose bet the rule set's table does not offer."""
        missing = [kind for kind in self.sides if kind not in bets]
        if missing:
            raise BaccaratError(f"system {self.name!r} bets on {', '.join(missing)}, which the rule set does not "
                                f"offer (it has {', '.join(bets)})")
        return self

    def with_session(self, **changes) -> "System":
        """The system with some session parameters replaced by the command line's (None keeps the file's),
        validated again: a problem names the option the user gave (`--bankroll x`), not the file's key."""
        given = {key: value for key, value in changes.items() if value is not None}
        document = self.model_dump(exclude_unset=True)
        document["session"] = {**document["session"], **given}
        options = {("session", key): f"--{key.replace('_', '-')} {shlex.quote(str(value))}"
                   for key, value in given.items()}
        try:
            return System.model_validate(document)
        except ValidationError as error:
            problems = validation_problems(error, options)
            if all(problem["loc"] in options for problem in error.errors()):
                raise BaccaratError(problems) from None  # the option's value alone is wrong, for any system
            with_options = f" with {' '.join(options.values())}" if options else ""
            raise BaccaratError(f"system {self.name!r}{with_options}: {problems}") from None


def _validated(document: dict, what: str) -> System:
    try:
        return System.model_validate(document)
    except ValidationError as error:
        raise BaccaratError(f"{what}: {validation_problems(error)}") from None


def known_systems() -> list[str]:
    return known_names("systems")


def load_system(name_or_path: str) -> System:
    """A shipped system by name, or a YAML file by path."""
    what = f"system {name_or_path!r}"
    return _validated(read_yaml(locate("systems", name_or_path, "system"), what), what)
