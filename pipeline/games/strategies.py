"""Strategies as data: `conf/strategies/<name>.yaml` (or any path) -> a validated Strategy.

A strategy is one side's play at the option cells of one draw table: the probability of
drawing at each, exact (a fraction written "9/11", or a decimal). A Banker strategy is keyed
by his total or by his two cards (`banker_sees`), and by the Player's third card (null when
the Player stood). Option cells a strategy does not list follow its `otherwise`.

`player_draw_probabilities` and `banker_draw_probabilities` spread a strategy over every
cell of its table, fixed cells included, as arrays of Fractions: what the exact evaluator,
the solver and the simulator read.
"""

from fractions import Fraction
from pathlib import Path
from typing import Annotated, Literal

import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, PlainValidator, ValidationError, model_validator

from pipeline.atomic import write_text
from pipeline.cards import VALUES
from pipeline.config_files import NAME, known_names, locate, read_yaml, shipped_or_file, validation_problems
from pipeline.errors import BaccaratError, cannot_write
from pipeline.rule_sets import RuleSet
from pipeline.rules import NATURAL_MIN, PLAYER_STOOD, DrawRules, load_draw_rules
from pipeline.user_files import UserFile, output_file, output_folder

PLAYER, BANKER = "player", "banker"
FOLLOWED_TABLE = "punto_banco"  # what `otherwise: punto_banco` follows: the casino's fixed choices
HAND_TOTALS = np.add.outer(np.arange(VALUES), np.arange(VALUES)) % 10  # of two card values a, b
_MARK = "# Written by `baccarat solve --write-strategies`."  # the first line of each file it writes


def probability(value) -> Fraction:
    """An exact probability from 1, 0.25, "0.25" or "9/11"; anything else is a ValueError."""
    if isinstance(value, bool) or not isinstance(value, int | float | str | Fraction):
        raise ValueError(f"{value!r} is not a probability (a number in [0, 1], e.g. 1, 0.25 or \"9/11\")")
    try:
        exact = Fraction(str(value).strip())
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"{value!r} is not a probability (a number in [0, 1], e.g. 1, 0.25 or \"9/11\")") from None
    if not 0 <= exact <= 1:
        raise ValueError(f"probability {value!r} is outside [0, 1]")
    return exact


Probability = Annotated[Fraction, PlainValidator(probability), PlainSerializer(str, return_type=str)]
CardValue = Annotated[int, Field(ge=0, le=9, strict=True)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)


class Cell(_Strict):
    """One option cell and the probability of drawing there."""

    total: CardValue | None = None
    cards: tuple[CardValue, CardValue] | None = None  # the Banker's two card values, when he sees them
    player_third: CardValue | None = None  # None: the Player stood
    draw: Probability

    @property
    def hand_total(self) -> int:
        return self.total if self.cards is None else sum(self.cards) % 10

    @property
    def column(self) -> int:
        return PLAYER_STOOD if self.player_third is None else self.player_third

    @property
    def key(self) -> tuple:
        return (self.hand_total, None if self.cards is None else tuple(sorted(self.cards)), self.column)

    def label(self) -> str:
        hand = f"cards {self.cards[0]},{self.cards[1]}" if self.cards else f"total {self.hand_total}"
        return f"{hand} v {'stood' if self.player_third is None else self.player_third}"


class Strategy(_Strict):
    name: Annotated[str, Field(pattern=NAME.pattern)]
    description: str = ""
    game: Annotated[str, Field(pattern=NAME.pattern)]  # the draw table it is for
    side: Literal["player", "banker"]
    banker_sees: Literal["total", "cards"] | None = None
    otherwise: Literal["punto_banco", "draw", "stand"]
    cells: list[Cell]

    @model_validator(mode="after")
    def _fits_its_game(self) -> "Strategy":
        if self.game not in known_names("draw"):
            raise ValueError(f"game {self.game!r} is not a draw table (known: {', '.join(known_names('draw'))})")
        if (self.side == BANKER) != (self.banker_sees is not None):
            raise ValueError("banker_sees (total or cards) is given for a banker strategy, and only then")
        draw = load_draw_rules(self.game)
        seen = set()
        for number, cell in enumerate(self.cells):
            problem = self._cell_problem(cell, draw)
            if problem is None and cell.key in seen:
                problem = "given twice"
            if problem:
                raise ValueError(f"cells.{number} ({cell.label()}): {problem}")
            seen.add(cell.key)
        return self

    def _cell_problem(self, cell: Cell, draw: DrawRules) -> str | None:
        if self.side == PLAYER:
            if cell.cards is not None or "player_third" in cell.model_fields_set or cell.total is None:
                return "a player cell gives his total only"
            if not draw.player_options[cell.total]:
                return f"draw table {self.game!r} gives the Player no option at {cell.total}"
            return None
        if "player_third" not in cell.model_fields_set:
            return "give player_third: the Player's third card 0 to 9, or null when he stood"
        if (cell.cards is None) != (self.banker_sees == "total"):
            return f"this Banker sees his {self.banker_sees}: key the cell by {self.banker_sees} only"
        if cell.cards is not None and cell.total is not None and cell.total != cell.hand_total:
            return f"cards {cell.cards[0]},{cell.cards[1]} make {cell.hand_total}, not {cell.total}"
        if cell.hand_total >= NATURAL_MIN or not draw.banker_options[cell.hand_total, cell.column]:
            return f"not an option cell of draw table {self.game!r}"
        return None

    def check_fits(self, rule_set: RuleSet, side: str) -> "Strategy":
        """This strategy plays `side` in `rule_set`'s game, or a one-line error."""
        if self.side != side:
            raise BaccaratError(f"strategy {self.name!r} is a {self.side} strategy, given for the {side}")
        if self.game != rule_set.draw_rules:
            raise BaccaratError(f"strategy {self.name!r} is for the game {self.game!r}, but rule set "
                                f"{rule_set.name!r} plays {rule_set.draw_rules!r}")
        return self


def known_strategies() -> list[str]:
    return known_names("strategies")


def validated_strategy(document: dict, what: str) -> Strategy:
    try:
        return Strategy.model_validate(document)
    except ValidationError as error:
        raise BaccaratError(f"{what}: {validation_problems(error)}") from None


def load_strategy(name_or_path: str) -> Strategy:
    """A shipped strategy by name, or a YAML file by path."""
    what = f"strategy {name_or_path!r}"
    return validated_strategy(read_yaml(locate("strategies", name_or_path, "strategy"), what), what)


def strategy_document(strategy: Strategy) -> dict:
    """A strategy as the YAML it loads from: a player cell gives his total only."""
    document = strategy.model_dump(mode="json", exclude={"cells"}, exclude_none=True)
    keys = ("total", "draw") if strategy.side == PLAYER else ("total", "cards", "player_third", "draw")
    document["cells"] = [{key: cell[key] for key in keys} for cell in strategy.model_dump(mode="json")["cells"]]
    return document


def shown_name(strategy: Strategy) -> str:
    """How a strategy is named to people: its name when conf/strategies ships it under that name as it
    is, else `NAME.yaml`, the file it came from (a file may reuse a shipped strategy's name)."""
    return shipped_or_file("strategies", strategy_document(strategy))


def write_strategies(strategies: list[Strategy], folder: Path | str) -> list[tuple[Path, bool]]:
    """Write each as `folder/<name>.yaml` (a new file, renamed into place): (path, written) for each.
    A file already there that it wrote is kept; if it holds another strategy, or is a file of the user's
    (user_files.output_file), nothing is written (a one-line error). An empty file is replaced."""
    folder = output_folder(folder, "--write-strategies")
    paths = [output_file(folder / f"{strategy.name}.yaml", "--write-strategies", _MARK.encode())
             for strategy in strategies]
    same = [_filled(path) and _holds(path, strategy) for path, strategy in zip(paths, strategies)]
    for path, kept in zip(paths, same):
        if _filled(path) and not kept:
            raise BaccaratError(f"{path} exists and holds another strategy: remove it or write to another folder")
    for path, strategy, kept in zip(paths, strategies, same):
        if not kept:
            _write_new(path, f"{_MARK}\n{yaml.safe_dump(strategy_document(strategy), sort_keys=False)}")
    return [(path, not kept) for path, kept in zip(paths, same)]


def _filled(path: Path) -> bool:
    return path.is_file() and path.stat().st_size > 0


def _holds(path: Path, strategy: Strategy) -> bool:
    what = str(path)
    return validated_strategy(read_yaml(UserFile(what, "strategy file"), what), what) == strategy


def _write_new(path: Path, text: str) -> None:
    try:
        write_text(path, text)
    except OSError as error:
        raise cannot_write(str(path), error) from None


def _otherwise(strategy: Strategy | None, fixed: np.ndarray, followed: np.ndarray) -> np.ndarray:
    choice = "punto_banco" if strategy is None else strategy.otherwise
    return {"punto_banco": followed, "draw": np.ones_like(fixed), "stand": np.zeros_like(fixed)}[choice]


def player_draw_probabilities(draw: DrawRules, strategy: Strategy | None = None) -> np.ndarray:
    """object[10]: the probability the Player draws on each two-card total."""
    followed = load_draw_rules(FOLLOWED_TABLE).player_draws
    chosen = np.where(draw.player_options, _otherwise(strategy, draw.player_draws, followed), draw.player_draws)
    probabilities = np.array([Fraction(int(draws)) for draws in chosen], dtype=object)
    for cell in strategy.cells if strategy else ():
        probabilities[cell.total] = cell.draw
    return probabilities


def banker_draw_probabilities(draw: DrawRules, strategy: Strategy | None = None) -> np.ndarray:
    """object[10, 10, 11]: the probability the Banker draws holding card values (a, b) (symmetric)
    against the Player's third card or PLAYER_STOOD."""
    followed = load_draw_rules(FOLLOWED_TABLE).banker_draws
    by_total = np.where(draw.banker_options, _otherwise(strategy, draw.banker_draws, followed), draw.banker_draws)
    probabilities = np.vectorize(lambda draws: Fraction(int(draws)), otypes=[object])(by_total[HAND_TOTALS])
    for cell in strategy.cells if strategy else ():
        if cell.cards is None:
            probabilities[HAND_TOTALS == cell.total, cell.column] = cell.draw
        else:
            a, b = cell.cards
            probabilities[a, b, cell.column] = probabilities[b, a, cell.column] = cell.draw
    return probabilities
