"""Drawing rules, loaded once from `conf/draw/<name>.yaml` into lookup tables.

`player_draws[total]` and `banker_draws[total, column]` are boolean arrays; the
banker column is the value of the Player's third card 0..9, or PLAYER_STOOD (10).
The exact calculator, the simulation kernel and the SQL all read these tables.

A table may leave cells to the players (chemin de fer): `player_options[total]` and
`banker_options[total, column]` mark them (an "O" in the YAML), and the draw arrays
hold False there; a strategy (pipeline/games) says what happens at those cells.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from pipeline.config_files import read_yaml, resource
from pipeline.errors import BaccaratError

PLAYER_STOOD = 10
NATURAL_MIN = 8


@dataclass(frozen=True)
class DrawRules:
    name: str
    player_draws: np.ndarray  # bool[10]
    banker_draws: np.ndarray  # bool[10, 11]; rows 8 and 9 never draw (naturals)
    player_options: np.ndarray  # bool[10]: the Player chooses at these totals
    banker_options: np.ndarray  # bool[10, 11]: the Banker chooses at these cells

    @property
    def has_options(self) -> bool:
        return bool(self.player_options.any() or self.banker_options.any())


def _banker_row(total: int, cells: str) -> list[str]:
    marks = cells.split()
    if len(marks) != 11 or set(marks) - {"D", "S", "O"}:
        raise BaccaratError(
            f"draw table row {total} must have 11 cells of D, S or O, got {cells!r}"
        )
    return marks


@cache
def load_draw_rules(name: str) -> DrawRules:
    document = read_yaml(resource("conf", "draw", f"{name}.yaml"), f"draw rules {name!r}")
    player, player_options = np.zeros(10, dtype=bool), np.zeros(10, dtype=bool)
    marks = np.full((10, 11), "S")
    try:
        player[list(document["player_draws_on"])] = True
        player_options[list(document.get("player_options_on", []))] = True
        rows = document["banker"]
        if sorted(rows) != list(range(NATURAL_MIN)):
            raise BaccaratError(f"draw rules {name!r}: the banker table needs rows 0 to 7")
        for total, cells in rows.items():
            marks[total] = _banker_row(total, str(cells))
    except (KeyError, TypeError, IndexError) as error:
        raise BaccaratError(f"draw rules {name!r}: malformed table ({type(error).__name__}: {error})") from None
    if (player & player_options).any() or player_options[NATURAL_MIN:].any():
        raise BaccaratError(f"draw rules {name!r}: a Player option total must be 0 to 7 and not also a drawing total")
    tables = (player, marks == "D", player_options, marks == "O")
    for table in tables:
        table.setflags(write=False)
    return DrawRules(name, *tables)


@dataclass(frozen=True)
class Result:
    """What a round's cards decide: both final totals and how many cards each hand holds."""

    player_total: int
    banker_total: int
    player_cards: int
    banker_cards: int

    @property
    def winner(self) -> str:
        if self.player_total == self.banker_total:
            return "T"
        return "P" if self.player_total > self.banker_total else "B"


def result_index(player_total, banker_total, player_cards, banker_cards):
    """Position of a result in bets.RESULT_STATES; works on ints and numpy arrays."""
    return ((player_total * 10 + banker_total) * 2 + player_cards - 2) * 2 + banker_cards - 2


def play_round(values: Sequence[int], draw: DrawRules) -> Result:
    """Play one round from card values in shoe order: Player, Banker, Player, Banker, then third cards."""
    player, banker = [values[0], values[2]], [values[1], values[3]]
    rest = iter(values[4:])
    pt, bt = sum(player) % 10, sum(banker) % 10
    if pt < NATURAL_MIN and bt < NATURAL_MIN:
        column = PLAYER_STOOD
        if draw.player_draws[pt]:
            player.append(next(rest))
            column = player[2]
        if draw.banker_draws[bt, column]:
            banker.append(next(rest))
    return Result(sum(player) % 10, sum(banker) % 10, len(player), len(banker))
