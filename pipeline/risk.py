"""Risk of ruin, exactly: flat and Martingale betting as an absorbing Markov chain on a lattice.

Rounds are dealt independently with the rule set's exact per-round probabilities (pipeline/exact.py).
The chain moves between the bankrolls at which a Martingale cycle starts (flat betting is a Martingale
whose cycles are one decided round), on the lattice of the largest step that divides every bankroll
change: a commission of 5 % makes Banker's steps +19 and -20 on a lattice of 1/20 unit. Pushes are
folded into each cycle's expected rounds and stakes. docs/betting-systems.md defines goal and ruin.
The chain is solved by pipeline/lattice.py to a proven error bound.
"""

from dataclasses import dataclass
from decimal import Decimal, localcontext
from fractions import Fraction
from math import ceil, gcd, lcm

from pipeline.bets import BET_KINDS, net_table
from pipeline.cards import code_counts, value_counts
from pipeline.errors import BaccaratError
from pipeline.exact import pair_combinations, result_combinations
from pipeline.lattice import Certified, Chain, solve
from pipeline.rule_sets import RuleSet

HUNDREDTHS = 100
RISK_SYSTEMS = ("flat", "martingale")
MOST_UNITS = 10_000  # bankroll plus goal: 200,000 lattice points on Banker
MOST_FILL = 200_000_000  # LU entries: seconds and a few hundred MB; a Banker Martingale to 700 units is more
# LU steps (Chain.work): a Tie Martingale to 5,000 units (bankroll plus goal), 1.0e11, took 2.7 s of CPU; to 7,000,
# 2.0e11, 7.9 s; to 10,000, 8.2e11, 24 s, its factors a sixth of MOST_FILL
MOST_WORK = 150_000_000_000


def net_distribution(rule_set: RuleSet, kind: str) -> dict[Fraction, Fraction]:
    """The exact probability of each net of one unit staked on `kind` in the next round from a full shoe."""
    rule_set.check_fixed_tableau("the risk of ruin needs the table to decide every draw")
    if kind not in rule_set.bets:
        raise BaccaratError(f"rule set {rule_set.name!r} has no {kind!r} bet (it has {', '.join(rule_set.bets)})")
    codes = code_counts(rule_set.decks)
    if BET_KINDS[kind].basis == "result":
        ways = result_combinations(value_counts(codes), rule_set.draw)
    else:
        ways = pair_combinations(codes)
    total = sum(ways)
    distribution: dict[Fraction, Fraction] = {}
    for net, count in zip(net_table(kind, rule_set.bets[kind]), ways):
        if count:
            distribution[Fraction(net)] = distribution.get(Fraction(net), 0) + Fraction(count, total)
    return distribution


@dataclass(frozen=True)
class Cycle:
    """One Martingale cycle from a bankroll, bets decided (pushes only repeat a stake)."""

    changes: dict[Fraction, Fraction]  # bankroll change in units -> probability
    rounds: Fraction  # expected rounds dealt, pushes included
    wagered: Fraction  # expected units staked, pushes included
    losing: Fraction  # the probability that every stake loses (a Banker win late in a cycle can lose money too)

    @property
    def expected(self) -> Fraction:
        return sum(change * p for change, p in self.changes.items())


def cycle(distribution: dict[Fraction, Fraction], levels: int) -> Cycle:
    """Stakes of 1, 2, 4, ... 2**(levels-1) units until a win; all of them lost is a losing cycle."""
    push = distribution.get(Fraction(0), Fraction(0))
    decided = 1 - push
    loss = sum((p for net, p in distribution.items() if net < 0), Fraction(0)) / decided
    changes: dict[Fraction, Fraction] = {}
    for level in range(levels):
        for net, p in distribution.items():
            if net > 0:
                change = net * 2**level - (2**level - 1)
                changes[change] = changes.get(change, 0) + loss**level * p / decided
    changes[Fraction(1 - 2**levels)] = changes.get(Fraction(1 - 2**levels), 0) + loss**levels
    reached = [loss**level for level in range(levels)]
    wagered = sum(r * 2**level for level, r in enumerate(reached)) / decided
    return Cycle(changes, sum(reached) / decided, wagered, loss**levels)


def most_levels(top: Fraction, table_max: Fraction | None) -> int:
    """The most doublings a cycle can stake below the bankroll `top` (in units) and the table maximum."""
    levels = 1
    while 2 ** (levels + 1) - 1 < top and (table_max is None or 2**levels <= table_max):
        levels += 1
    return levels


@dataclass(frozen=True)
class RiskQuestion:
    bet: str
    system: str  # flat or martingale
    bankroll: Fraction  # in units
    goal: Fraction  # in units: the session stops once the bankroll reaches bankroll + goal
    table_max: Fraction | None = None  # in units; Martingale only


@dataclass(frozen=True)
class RiskAnswer:
    question: RiskQuestion
    edge: Fraction  # expected net per unit staked
    goal_reached: Certified  # probability
    rounds: Certified  # expected rounds dealt
    wagered: Certified  # expected units staked
    first_cycle: Cycle | None  # Martingale: the cycle from the starting bankroll
    lattice_states: int

    @property
    def expected_net(self) -> Certified:
        """Wald's identity: expected net = edge x expected total wagered, whatever the system."""
        return self.wagered.scaled(self.edge)


_MOST_DIGITS = 1000  # a number's exponent past which units() refuses it (Fraction would build a huge integer)


def units(text: str, option: str) -> Fraction:
    """A number of units given on the command line, e.g. 1000 or 12.5."""
    try:
        value = Decimal(text)
    except ArithmeticError:
        raise BaccaratError(f"{option} must be a number of units, got {text!r}") from None
    if not value.is_finite():
        raise BaccaratError(f"{option} must be a number of units, got {text!r}")
    if value and abs(value.adjusted()) > _MOST_DIGITS:
        # Fraction(Decimal('1e99999999')) builds a 330-million-bit integer: the command hung for minutes
        raise BaccaratError(f"{option} must be a number of units between 10^-{_MOST_DIGITS} and 10^{_MOST_DIGITS} "
                            f"in size, got {text!r}")
    return Fraction(value)


def check_question(question: RiskQuestion) -> None:
    if question.system not in RISK_SYSTEMS:
        raise BaccaratError(f"unknown system {question.system!r} for risk (known: {', '.join(RISK_SYSTEMS)})")
    for name, value in (("bankroll", question.bankroll), ("goal", question.goal)):
        if value <= 0 or (value * HUNDREDTHS).denominator != 1:
            raise BaccaratError(f"--{name} must be a positive number of units with at most 2 decimals, "
                                f"got {_shown(value)}")
    if question.bankroll + question.goal > MOST_UNITS:
        raise BaccaratError(f"bankroll plus goal is at most {MOST_UNITS:,} units")
    if question.bankroll < 1:
        raise BaccaratError(f"a bankroll of {_shown(question.bankroll)} units cannot cover one stake of 1 unit")
    if question.table_max is not None:
        if question.system != "martingale":
            raise BaccaratError("--table-max is for --system martingale")
        if question.table_max < 1:
            raise BaccaratError(f"the table maximum {_shown(question.table_max)} is below the unit (1)")


def _chain(question: RiskQuestion, distribution: dict[Fraction, Fraction]) -> tuple[Chain, list[Cycle]]:
    """The chain on the lattice, in bands by how many doublings a bankroll affords (1 + 2 + ... + 2**(k-1)
    units for k); the cycle played in each band."""
    table_max = question.table_max if question.system == "martingale" else Fraction(1)
    top = question.bankroll + question.goal
    cycles = [cycle(distribution, levels) for levels in range(1, most_levels(top, table_max) + 1)]
    amounts = [question.bankroll, question.goal, Fraction(1)] + [change for c in cycles for change in c.changes]
    step = Fraction(gcd(*(int(a * HUNDREDTHS) for a in amounts)), HUNDREDTHS)
    denominator = lcm(*(p.denominator for c in cycles for p in c.changes.values()))
    bands = [(ceil((2**levels - 1) / step), [(int(change / step), int(p * denominator))
                                            for change, p in c.changes.items()])
             for levels, c in enumerate(cycles, start=1)]
    return Chain(int(1 / step), int(top / step), int(question.bankroll / step), denominator, bands), cycles


def risk(question: RiskQuestion, distribution: dict[Fraction, Fraction]) -> RiskAnswer:
    """Probability of reaching the goal before ruin, expected rounds and stakes, for one bet's distribution."""
    check_question(question)
    chain, cycles = _chain(question, distribution)
    if chain.fill > MOST_FILL or chain.work > MOST_WORK:
        raise BaccaratError(f"{question.system} on {question.bet} from {_decimal(question.bankroll)} to "
                            f"{_decimal(question.bankroll + question.goal)} units is a chain of "
                            f"{chain.goal - chain.low:,} states, too many to solve in a few seconds: give a "
                            "smaller bankroll and goal")
    goal, rounds, wagered = solve(chain, [[c.rounds for c in cycles], [c.wagered for c in cycles]])
    first = None
    if question.system == "martingale":
        first = cycles[max(band for band, (begins, _) in enumerate(chain.bands) if begins <= chain.start)]
    edge = sum(net * p for net, p in distribution.items())
    return RiskAnswer(question, edge, goal, rounds, wagered, first, chain.goal - chain.low)


def risk_document(answer: RiskAnswer) -> dict:
    """The answer for --json: exact values as decimal strings, each with its proven error bound."""
    question = answer.question
    document = {
        "bet": question.bet, "system": question.system, "bankroll": _decimal(question.bankroll),
        "goal": _decimal(question.goal),
        "table_max": None if question.table_max is None else _decimal(question.table_max),
        "edge": _decimal(answer.edge, 12), "lattice_states": answer.lattice_states,
        "goal_reached": answer.goal_reached.document(), "ruined": answer.goal_reached.complement().document(),
        "expected_rounds": answer.rounds.document(), "expected_wagered": answer.wagered.document(),
        "expected_net": answer.expected_net.document(),
    }
    if answer.first_cycle is not None:
        document["cycle"] = {"losing_probability": _decimal(answer.first_cycle.losing, 15),
                             "expected_result": _decimal(answer.first_cycle.expected, 15),
                             "expected_rounds": _decimal(answer.first_cycle.rounds, 15)}
    return document


def _shown(value: Fraction) -> str:
    """A number as given (a bad one included), for messages."""
    return f"{Decimal(value.numerator) / value.denominator:g}"


def _decimal(value: Fraction, places: int = 2) -> str:
    with localcontext() as context:
        context.prec = len(str(abs(value.numerator) // value.denominator)) + places + 1
        return f"{round(Decimal(value.numerator) / Decimal(value.denominator), places).normalize():f}"
