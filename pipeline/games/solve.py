"""Equilibria of chemin de fer, exactly, in rationals.

The Player has one decision: draw at his option total with probability p. Every deal meets
the Banker at one cell at most, so given p the Banker's choices at distinct information sets
are separable: his gain from drawing rather than standing at set I is linear in p,
delta_I(p) = alpha_I + beta_I p, and his best response is cellwise. For a fixed Banker
strategy q the Player's gain is linear in p, with slope s(q) = sigma + sum_I q_I d_I.

So (p, q) is an equilibrium exactly when q draws where delta_I(p) > 0, stands where it is
< 0, mixes freely where it is 0, and s(q) is <= 0 (p = 0), >= 0 (p = 1) or = 0 (0 < p < 1).
Between two consecutive roots of the delta_I the Banker's best response is one pure
strategy, so checking the roots, the ends and one point inside each gap finds every
equilibrium: this decides uniqueness too. Without commission the game is zero-sum, the
equilibria are its saddle points, and the Player's guaranteed value is the concave
piecewise-linear function of p whose breakpoints are those roots (Kemeny-Snell); with
commission it is a bimatrix game (Ethier-Lee 2023), solved the same way.
"""

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from pipeline.cards import VALUES, decks_text
from pipeline.errors import BaccaratError
from pipeline.games.strategies import (
    BANKER,
    FOLLOWED_TABLE,
    HAND_TOTALS,
    PLAYER,
    Cell,
    Strategy,
    banker_draw_probabilities,
    player_draw_probabilities,
)
from pipeline.games.value import (
    BANKER_WINS,
    DRAW,
    INFINITE,
    PLAYER_WINS,
    STAND,
    DealCounts,
    Value,
    against_player,
    count_deals,
    strategy_value,
)
from pipeline.rule_sets import MOST_COMMISSION, RuleSet
from pipeline.rules import NATURAL_MIN, PLAYER_STOOD, DrawRules, load_draw_rules

SEES = ("total", "cards")
OPTION_TOTAL = 5  # the Player's one decision in chemin de fer


@dataclass(frozen=True)
class InformationSet:
    """What the Banker knows when he chooses: his total or his two cards, and the column."""

    total: int
    cards: tuple[int, int] | None
    column: int
    hands: tuple[tuple[int, int], ...]  # the two-card hands (a <= b) it holds

    def cell(self, draw: Fraction) -> Cell:
        third = None if self.column == PLAYER_STOOD else self.column
        return Cell(total=self.total, cards=self.cards, player_third=third, draw=draw)


def information_sets(draw: DrawRules, banker_sees: str) -> list[InformationSet]:
    hands = [(a, b) for a in range(VALUES) for b in range(a, VALUES) if (a + b) % 10 < NATURAL_MIN]
    sets = []
    for total, column in zip(*np.nonzero(draw.banker_options)):
        mine = tuple(hand for hand in hands if sum(hand) % 10 == total)
        if banker_sees == "total":
            sets.append(InformationSet(int(total), None, int(column), mine))
        else:
            sets.extend(InformationSet(int(total), hand, int(column), (hand,)) for hand in mine)
    return sorted(sets, key=lambda s: (s.total, s.cards or (), s.column))


@dataclass(frozen=True)
class Equilibrium:
    player_draw: np.ndarray  # object[10]
    banker_draw: np.ndarray  # object[10, 10, 11]
    option_total: int
    banker: list[Cell]  # the information sets where the Banker departs from punto banco, or mixes
    value: Value
    unique: bool


@dataclass(frozen=True)
class _Game:
    """The linear pieces: alpha, beta, d per information set (integers), and sigma."""

    sets: list[InformationSet]
    alpha: list[int]
    beta: list[int]
    d: list[int]
    sigma: int

    def check(self, p: Fraction) -> tuple[bool, list[int], list[int], int, int]:
        """Whether p is the Player's part of an equilibrium, with the Banker's draw and indifferent
        sets at p, and the range [lo, hi] of the Player's slope over his best responses."""
        signs = [a * p.denominator + b * p.numerator for a, b in zip(self.alpha, self.beta)]
        draws = [i for i, sign in enumerate(signs) if sign > 0]
        indifferent = [i for i, sign in enumerate(signs) if sign == 0]
        base = self.sigma + sum(self.d[i] for i in draws)
        lo = base + sum(min(0, self.d[i]) for i in indifferent)
        hi = base + sum(max(0, self.d[i]) for i in indifferent)
        holds = lo <= 0 if p == 0 else hi >= 0 if p == 1 else lo <= 0 <= hi
        return holds, draws, indifferent, lo, hi

    def candidates(self) -> list[Fraction]:
        roots = {Fraction(-a, b) for a, b in zip(self.alpha, self.beta) if b}
        return sorted({Fraction(0), Fraction(1)} | {r for r in roots if 0 < r < 1})


def _slope_and_gains(counts: DealCounts, draw: DrawRules, option: int, commission: Fraction):
    """Per cell and Banker action: how much the Player's net wins change from p = 0 to p = 1, and
    the Banker's gain (scaled by the commission's denominator) at p = 0 and at p = 1."""
    nets, gains = [], []
    for p in (0, 1):
        player_draw = player_draw_probabilities(draw)
        player_draw[option] = Fraction(p)
        wins = against_player(counts, player_draw).by_cell
        player, banker = wins[..., PLAYER_WINS], wins[..., BANKER_WINS]
        nets.append(player - banker)
        gains.append((commission.denominator - commission.numerator) * banker - commission.denominator * player)
    return nets[1] - nets[0], gains


def _game(counts: DealCounts, draw: DrawRules, sets: list[InformationSet], option: int,
          commission: Fraction) -> _Game:
    slope, gains = _slope_and_gains(counts, draw, option, commission)
    fixed = ~draw.banker_options[HAND_TOTALS]
    sigma = int(np.where(draw.banker_draws[HAND_TOTALS], slope[..., DRAW], slope[..., STAND])[fixed].sum())
    alpha, beta, d = [], [], []
    for s in sets:
        alpha.append(_drawing_less_standing(gains[0], s))
        beta.append(_drawing_less_standing(gains[1], s) - alpha[-1])
        d.append(_drawing_less_standing(slope, s))
        a, b = np.array(s.hands).T
        sigma += int(slope[a, b, s.column, STAND].sum())
    return _Game(sets, alpha, beta, d, sigma)


def _drawing_less_standing(by_cell: np.ndarray, s: InformationSet) -> int:
    a, b = np.array(s.hands).T
    return int((by_cell[a, b, s.column, DRAW] - by_cell[a, b, s.column, STAND]).sum())


def _mix(game: _Game, p: Fraction, draws: list[int], indifferent: list[int], start: list[Fraction]) -> dict:
    """The Banker's draw probability per information set: pure where he is not indifferent;
    at the indifferent sets, starting from `start`, moved just enough to make p the Player's best
    response (slope 0 inside (0, 1), <= 0 at p = 0, >= 0 at p = 1)."""
    q = dict.fromkeys(range(len(game.sets)), Fraction(0)) | dict.fromkeys(draws, Fraction(1))
    q |= {i: start[i] for i in indifferent}
    slope = game.sigma + sum(q[i] * game.d[i] for i in q)
    target = min(slope, 0) if p == 0 else max(slope, 0) if p == 1 else 0
    for i in indifferent:
        need = target - slope
        if need == 0 or game.d[i] == 0:
            continue
        moved = min(max(q[i] + need / game.d[i], Fraction(0)), Fraction(1))
        slope += (moved - q[i]) * game.d[i]
        q[i] = moved
    assert slope == target, "the minimax theorem guarantees a mixing"
    return q


def _unique(game: _Game, p: Fraction, indifferent: list[int], lo: int, hi: int) -> bool:
    """Whether the Banker's part is forced at p (the Player's part is checked by the caller)."""
    if not indifferent:
        return True
    if any(game.d[i] == 0 for i in indifferent):
        return False
    return {Fraction(0): lo == 0, Fraction(1): hi == 0}.get(p, len(indifferent) == 1 or 0 in (lo, hi))


def solve(counts: DealCounts, draw: DrawRules, banker_sees: str, commission: Fraction) -> Equilibrium:
    """An equilibrium of the game dealt by `counts` under `draw`, and whether it is the only one."""
    if np.flatnonzero(draw.player_options).tolist() != [OPTION_TOTAL]:
        raise BaccaratError(f"draw table {draw.name!r}: the solver needs the Player's one option at {OPTION_TOTAL}")
    option = OPTION_TOTAL
    sets = information_sets(draw, banker_sees)
    game = _game(counts, draw, sets, option, Fraction(commission))
    points = game.candidates()
    found = [(p, game.check(p)) for p in points]
    equilibria = [(p, checked) for p, checked in found if checked[0]]
    gaps = [(low + high) / 2 for low, high in zip(points, points[1:])]
    continuum = any(game.check(middle)[0] for middle in gaps)
    p, (_, draws, indifferent, lo, hi) = equilibria[0]
    followed = load_draw_rules(FOLLOWED_TABLE).banker_draws
    start = [Fraction(int(followed[s.total, s.column])) for s in sets]
    q = _mix(game, p, draws, indifferent, start)
    player_draw = player_draw_probabilities(draw)
    player_draw[option] = p
    banker_draw = _spread(draw, sets, q)
    departures = [s.cell(q[i]) for i, s in enumerate(sets) if q[i] != start[i]]
    unique = len(equilibria) == 1 and not continuum and _unique(game, p, indifferent, lo, hi)
    value = strategy_value(counts, player_draw, banker_draw, commission)
    return Equilibrium(player_draw, banker_draw, option, departures, value, unique)


def _spread(draw: DrawRules, sets: list[InformationSet], q: dict) -> np.ndarray:
    """The Banker's draw probability at every cell: the table's where it is fixed, q at the options."""
    banker_draw = banker_draw_probabilities(draw)
    for i, s in enumerate(sets):
        for a, b in s.hands:
            banker_draw[a, b, s.column] = banker_draw[b, a, s.column] = q[i]
    return banker_draw


def commission_of(text: str) -> Fraction:
    """A commission from "0.05" or "1/20", in [0, MOST_COMMISSION], or a one-line error."""
    try:
        commission = Fraction(text.strip())
    except (ValueError, ZeroDivisionError):
        raise BaccaratError(f"commission {text!r} is not a number (e.g. 0.05 for 5 %)") from None
    return check_commission(commission, text.strip())


def check_commission(commission: Fraction, given: str | None = None) -> Fraction:
    """`commission` if in [0, MOST_COMMISSION], else a one-line error showing it as `given` (as typed)."""
    if not 0 <= commission <= MOST_COMMISSION:
        raise BaccaratError(f"commission {given or f'{float(commission):g}'} is outside [0, {MOST_COMMISSION}]")
    return commission


def solve_rules(rule_set: RuleSet, decks: int | str, banker_sees: str, commission: Fraction) -> Equilibrium:
    """An equilibrium of `rule_set`'s game from a shoe of `decks` (or INFINITE)."""
    if not rule_set.has_options:
        raise BaccaratError(f"rule set {rule_set.name!r} fixes every drawing decision: there is nothing to solve")
    if rule_set.two_hands is not None:
        raise BaccaratError(f"rule set {rule_set.name!r} is baccarat banque (two Player hands): the solver is for "
                            f"chemin de fer; `baccarat odds --rules {rule_set.name} --banker-policy NAME` values a profile")
    if banker_sees not in SEES:
        raise BaccaratError(f"the Banker sees his total or his cards, not {banker_sees!r}")
    return solve(count_deals(rule_set.draw, decks), rule_set.draw, banker_sees, check_commission(commission))


def equilibrium_document(rules: str, decks: int | str, banker_sees: str, commission: Fraction,
                         equilibrium: Equilibrium) -> dict:
    """The solution as JSON: exact fractions as "p/q" strings, floats beside them."""
    value, p = equilibrium.value, equilibrium.player_draw[equilibrium.option_total]
    banker = [{**cell.model_dump(mode="json"), "draw_float": float(cell.draw)} for cell in equilibrium.banker]
    return {
        "rules": rules, "decks": decks, "banker_sees": banker_sees,
        "commission": str(commission), "commission_float": float(commission),
        "value": {"player": str(value.player), "banker": str(value.banker)},
        "value_float": {"player": float(value.player), "banker": float(value.banker)},
        "player_draw_at_5": str(p), "player_draw_at_5_float": float(p),
        "banker": banker,
        "unique": equilibrium.unique,
    }


def equilibrium_strategies(rule_set: RuleSet, decks: int | str, banker_sees: str, commission: Fraction,
                           equilibrium: Equilibrium) -> list[Strategy]:
    """The equilibrium as strategy data, named after its model: the Player's, then the Banker's."""
    model = f"{rule_set.name}_equilibrium_{decks}{'' if decks == INFINITE else '_decks'}_{banker_sees}"
    if commission != rule_set.commission:
        model += f"_commission_{str(commission).replace('/', '_')}"
    shoe = "an infinite deck" if decks == INFINITE else decks_text(decks)
    about = (f"an equilibrium of {rule_set.name} ({shoe}, the Banker sees his {banker_sees}, commission "
             f"{commission}), from `baccarat solve`; {'unique' if equilibrium.unique else 'not the only one'}")
    p = equilibrium.player_draw[equilibrium.option_total]
    common = {"description": about, "game": rule_set.draw_rules, "otherwise": "punto_banco"}
    return [
        Strategy(name=f"{model}_player", side=PLAYER, cells=[Cell(total=equilibrium.option_total, draw=p)], **common),
        Strategy(name=f"{model}_banker", side=BANKER, banker_sees=banker_sees, cells=equilibrium.banker, **common),
    ]
