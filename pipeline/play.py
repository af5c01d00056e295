"""Play one betting system over a sequence of rounds: one session, in exact decimals, without Spark.

The reference of the backtest's compiled loop (pipeline/session_kernel.py), which plays sessions one
after the other over a run's rounds as this plays one; the tests call it over hand-made rounds. The
rules of a session (docs/betting-systems.md): before each round the progression names a stake in units;
above the table maximum it stays at the maximum or starts over (the system says which, and the hit is
counted); a stake the bankroll cannot cover starts the progression over; a bankroll that cannot cover
one unit is ruin. The session ends at the first of goal, ruin, stop-loss,
round limit and, for a session that may not span shoes, the end of its shoe. A chooser's roads are
its shoe's: a session that starts mid-shoe sees the shoe's results so far.
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from math import ceil

from pipeline.errors import BaccaratError
from pipeline.systems import DERIVED_ROADS, Chooser, Progression, System

OPPOSITE = {"banker": "player", "player": "banker"}
SIDE_OF = {"B": "banker", "P": "player"}
ENDINGS = ("goal", "ruin", "stop_loss", "max_rounds", "shoe_end", "incomplete")
CHECKPOINTS = (10, 25, 50, 100, 250, 500, 1000)  # the sessions table's bankroll_after_N columns
WINNER_CODES = "BPT"  # the compiled loop's winners: 0 Banker, 1 Player, 2 tie (docs/rules.md)
CENTS = 100
# Changes whenever the rules of a session change what a session plays, so that a backtest made before is
# played again, not taken as done: 2, a session that starts mid-shoe chooses from the shoe's roads so far.
SESSION_RULES_VERSION = 2


@dataclass(frozen=True)
class Round:
    shoe: int  # roads start again with each shoe
    winner: str  # "B", "P" or "T"
    nets: Mapping[str, Decimal]  # the net of one unit staked, for each bet kind the system may stake on


@dataclass(frozen=True)
class SessionResult:
    start: Decimal
    end: Decimal
    rounds: int  # rounds consumed, ties included: the next session starts after them
    stakes: int  # bets placed
    wagered: Decimal
    max_drawdown: Decimal  # the largest fall of the bankroll from its highest point so far
    ended: str  # one of ENDINGS: incomplete when the rounds ran out first
    table_max_hits: int
    wagered_on: Mapping[str, Decimal]  # the part of wagered staked on each bet kind staked on
    after: tuple[Decimal, ...]  # the bankroll after each of CHECKPOINTS rounds consumed (the end one if fewer)

    @property
    def net(self) -> Decimal:
        return self.end - self.start


class _Stakes:
    """A progression's state: the next stake in units, moved by each decided bet."""

    def __init__(self, progression: Progression):
        self.progression = progression
        self.reset()

    def reset(self) -> None:
        self.level = 0  # martingale, paroli, 1-3-2-6: position; fibonacci: index; dalembert, oscar: units
        self.units = 1
        self.line = list(self.progression.line)
        self.profit = Decimal(0)  # oscar's grind: units won in this series

    def next_units(self) -> int:
        kind = self.progression.kind
        if kind == "labouchere":
            return self.line[0] + self.line[-1] if len(self.line) > 1 else self.line[0]
        if kind == "fibonacci":
            small, large = 1, 1
            for _ in range(self.level):
                small, large = large, small + large
            return small
        if kind in ("martingale", "paroli"):
            return 2**self.level
        if kind == "one_three_two_six":
            return (1, 3, 2, 6)[self.level]
        return self.units  # flat, dalembert, oscars_grind

    def settle(self, won: bool, net_units: Decimal) -> None:
        kind, staked = self.progression.kind, self.next_units()
        if kind == "martingale":
            self.level = 0 if won else self.level + 1
        elif kind == "paroli":
            self.level = self.level + 1 if won and self.level + 1 < self.progression.paroli_wins else 0
        elif kind == "one_three_two_six":
            self.level = (self.level + 1) % 4 if won else 0
        elif kind == "dalembert":
            self.units = max(1, self.units - 1) if won else self.units + 1
        elif kind == "fibonacci":
            self.level = max(0, self.level - 2) if won else self.level + 1
        elif kind == "labouchere":
            self._cross_out(won, staked)
        elif kind == "oscars_grind":
            self._grind(won, staked, net_units)

    def _cross_out(self, won: bool, staked: int) -> None:
        if not won:
            self.line.append(staked)
            return
        self.line = self.line[1:-1]
        if not self.line:
            self.reset()

    def _grind(self, won: bool, staked: int, net_units: Decimal) -> None:
        self.profit += net_units
        if self.profit >= 1:
            self.reset()
        elif won:
            self.units = min(staked + 1, max(1, ceil(1 - self.profit)))


class _BigRoad:
    """The big road's columns of one shoe, and each derived road's last mark."""

    def __init__(self):
        self.columns: list[list] = []  # [side, length]
        self.last_marks: dict[str, str] = {}

    def add(self, winner: str) -> None:
        if winner not in SIDE_OF:
            return
        for road, back in DERIVED_ROADS.items():
            mark = self.mark(SIDE_OF[winner], back)
            if mark is not None:
                self.last_marks[road] = mark
        if self.columns and self.columns[-1][0] == SIDE_OF[winner]:
            self.columns[-1][1] += 1
        else:
            self.columns.append([SIDE_OF[winner], 1])

    def mark(self, side: str, back: int) -> str | None:
        """The mark a derived road comparing `back` columns would give a new `side` entry (docs/rules.md)."""
        lengths = [length for _, length in self.columns]
        if self.columns and self.columns[-1][0] == side:
            column, row = len(lengths) - 1, lengths[-1]
        else:
            column, row = len(lengths), 0
        if row == 0:
            if column - 1 - back < 0:
                return None
            return "red" if lengths[column - 1] == lengths[column - 1 - back] else "blue"
        if column - back < 0:
            return None
        return "blue" if lengths[column - back] == row else "red"


def _side(chooser: Chooser, road: _BigRoad) -> str:
    if chooser.choose == "same_side" or not road.columns:
        return chooser.first
    side, length = road.columns[-1]
    if chooser.choose == "follow_last_winner":
        return side
    if chooser.choose == "opposite_last_winner":
        return OPPOSITE[side]
    if chooser.choose == "big_road_column":
        if len(road.columns) < 2:
            return side
        return side if length < road.columns[-2][1] else OPPOSITE[side]
    last = road.last_marks.get(chooser.road)
    back = DERIVED_ROADS[chooser.road]
    matching = [s for s in ("banker", "player") if last is not None and road.mark(s, back) == last]
    return matching[0] if len(matching) == 1 else chooser.first


class _Bankroll:
    def __init__(self, start: Decimal):
        self.money = self.peak = start
        self.max_drawdown = Decimal(0)
        self.wagered = Decimal(0)
        self.wagered_on: dict[str, Decimal] = {}
        self.stakes = 0

    def settle(self, kind: str, stake: Decimal, net: Decimal) -> None:
        self.money += stake * net
        self.wagered += stake
        self.wagered_on[kind] = self.wagered_on.get(kind, Decimal(0)) + stake
        self.stakes += 1
        self.peak = max(self.peak, self.money)
        self.max_drawdown = max(self.max_drawdown, self.peak - self.money)


def _stake(system: System, stakes: _Stakes, money: Decimal) -> tuple[Decimal, bool]:
    """The next stake and whether the progression went past the table maximum."""
    stake = system.unit * stakes.next_units()
    hit = stake > system.table.maximum
    if hit and system.progression.at_max == "stay":
        stake = system.table.maximum
    elif hit:
        stakes.reset()
        stake = system.unit
    if stake > money:  # a stake the bankroll cannot cover starts the progression over
        stakes.reset()
        stake = system.unit
    return stake, hit


def _ending(system: System, bankroll: _Bankroll, counted: int) -> str | None:
    session = system.session
    if bankroll.money >= session.bankroll + session.goal:
        return "goal"
    if bankroll.money < system.unit:
        return "ruin"
    if session.stop_loss is not None and bankroll.money <= session.bankroll - session.stop_loss:
        return "stop_loss"
    if session.max_rounds is not None and counted >= session.max_rounds:
        return "max_rounds"
    return None


def _shoe_so_far(earlier: Sequence[Round], shoe: int) -> _BigRoad:
    """The roads of `shoe`'s rounds at the end of `earlier`."""
    begin = len(earlier)
    while begin > 0 and earlier[begin - 1].shoe == shoe:
        begin -= 1
    road = _BigRoad()
    for played in earlier[begin:]:
        road.add(played.winner)
    return road


def play_session(system: System, rounds: Iterable[Round], earlier: Sequence[Round] = ()) -> SessionResult:
    """One session of `system` from the first of `rounds`, until it ends or the rounds run out.
    `earlier`: the rounds before it in run order, or those of its shoe at least: a session that starts
    mid-shoe chooses its sides from the shoe's roads so far."""
    bankroll, stakes = _Bankroll(system.session.bankroll), _Stakes(system.progression)
    used = counted = hits = 0  # rounds consumed; rounds towards max_rounds; stakes above the table maximum
    shoe = None
    ended = "incomplete"
    after = {}
    for played in rounds:
        if shoe is None:  # a fixed bet reads no road: the shoe's earlier rounds are not played over again
            road = _BigRoad() if isinstance(system.bet, str) else _shoe_so_far(earlier, played.shoe)
        elif played.shoe != shoe:
            if not system.session.span_shoes:
                ended = "shoe_end"
                break
            road = _BigRoad()
        shoe = played.shoe
        kind = system.bet if isinstance(system.bet, str) else _side(system.bet, road)
        stake, hit = _stake(system, stakes, bankroll.money)
        hits += hit
        net = played.nets[kind]
        bankroll.settle(kind, stake, net)
        if net:
            stakes.settle(net > 0, stake * net / system.unit)
        road.add(played.winner)
        used += 1
        if used in CHECKPOINTS:
            after[used] = bankroll.money
        counted += played.winner != "T" or system.session.ties_count
        ending = _ending(system, bankroll, counted)
        if ending is not None:
            ended = ending
            break
    return SessionResult(system.session.bankroll, bankroll.money, used, bankroll.stakes, bankroll.wagered,
                         bankroll.max_drawdown, ended, hits, bankroll.wagered_on,
                         tuple(after.get(rounds, bankroll.money) for rounds in CHECKPOINTS))


def check_exact_cents(system: System, nets: Iterable[int]) -> None:
    """Refuse, in one line, a system whose stake in cents times a net in hundredths of a unit (each of
    `nets`) is not a whole number of cents: play_sessions' money would not be exact. Every stake is a
    whole number of units, or the table maximum for a progression that stays there."""
    stakes = {int(system.unit * CENTS)} | ({int(system.table.maximum * CENTS)}
                                           if system.progression.at_max == "stay" else set())
    for net in sorted(set(nets)):
        for stake in sorted(stakes):
            if stake * net % CENTS:
                raise BaccaratError(f"system {system.name!r}: a stake of {Decimal(stake).scaleb(-2)} at a net of "
                                    f"{Decimal(net).scaleb(-2)} a unit is not a whole number of cents")
