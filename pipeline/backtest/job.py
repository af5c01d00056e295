"""The backtest job, on the job skeleton (pipeline.jobs): Spark schedules ranges of a committed run's
shoes as tasks; each task reads its shoes' rounds from the run's committed files, plays every system's
sessions that start in its range (finding the first one exactly from the rounds before it, see
coalesce.py), and writes one Parquet file; the driver commits every file to OUT/sessions in one Delta
transaction, in place of the run's earlier sessions rows (whatever systems they were of).
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal

import numpy as np
import pyarrow as pa

from pipeline.backtest.coalesce import check_bounded, first_start_at, session_bound, TIE
from pipeline.backtest.rounds import Rounds, read_rounds
from pipeline.bets import net_cents_table
from pipeline.errors import BaccaratError
from pipeline.jobs import Written, content_key, new_tag
from pipeline.play import CHECKPOINTS, ENDINGS, check_exact_cents
from pipeline.session_kernel import play_sessions
from pipeline.rule_sets import RuleSet
from pipeline.runs import RunRecord, check_run, read_committed_run
from pipeline.schemas import contract
from pipeline.storage import Store
from pipeline.systems import System, load_system
from pipeline.tasks import part_name, partitions_for, shoe_ranges, write_files

SESSIONS = "sessions"
SHOES_PER_TASK = 10_000
LOOKBACK_SHOES = 1  # the first look-back window before a range, doubled until the chains agree
MONEY = ("start_bankroll", "end_bankroll", "wagered", "wagered_banker", "wagered_player", "max_drawdown")


@dataclass(frozen=True)
class Plan:
    run: RunRecord  # the committed run's
    rule_set: RuleSet
    systems: tuple[System, ...]  # with the command's session parameters
    out: Store
    partitions: int | None = None  # None: chosen from the cluster's parallelism once Spark is up
    job: str = field(default_factory=new_tag)  # tags this job's temporary files
    tables = (SESSIONS,)
    application = "baccarat-backtest"
    in_runs = False
    overwrite_needed = False  # the rows describe the run: a backtest of other systems replaces them

    @property
    def what(self) -> str:
        return f"sessions of run {self.run_id!r}"

    @property
    def run_id(self) -> str:
        return self.run.run_id

    @property
    def shoes(self) -> int:
        return self.run.shoes

    @property
    def kinds(self) -> tuple[str, ...]:
        """Every bet kind a system may stake on."""
        return tuple(sorted({kind for system in self.systems for kind in system.sides}))

    def ranges(self) -> list[tuple[int, int]]:
        return shoe_ranges(self.shoes, self.partitions)

    def parameters(self) -> dict:
        """The rows depend on the run and the systems alone, so equal content keys mean equal rows
        whatever the partitions."""
        return {"run": self.run.parameters, "systems": [system.model_dump(mode="json") for system in self.systems]}

    def write_range(self, first: int, last: int, report_batch: Callable[[int, int], None]) -> dict:
        return write_range(self, first, last, report_batch)

    def table_schema(self, table: str) -> pa.Schema:
        return contract(SESSIONS).table_schema(())

    def result(self, written: Written) -> dict:
        summaries = {system.name: _summed([r["summaries"][system.name] for r in written.results])
                     for system in self.systems}
        return {"run_id": self.run_id, "sessions": sum(f["rows"] for f in written.files), "files": written.files,
                "version": written.versions[SESSIONS], "summaries": summaries, "partitions": len(written.results)}


def _summed(summaries: list[dict]) -> dict:
    return {key: (np.sum([s[key] for s in summaries], axis=0).tolist()) for key in summaries[0]}


def plan_for(out: Store, run_id: str, names: list[str], session: dict, partitions: int | None = None) -> Plan:
    """The plan for a committed run whose files pass their checks, or a one-line error: an unknown run
    or system, a system that is bad, bets on what the rule set lacks or whose sessions have no bound,
    no system or a name given twice. `session`: the session parameters replacing each system's (None keeps its own)."""
    if not names:
        raise BaccaratError("--systems names no system (names in conf/systems or paths, separated by commas)")
    run, rule_set = read_committed_run(out, run_id)
    systems = tuple(_system_for(name, session, rule_set) for name in names)
    seen = [system.name for system in systems]
    if twice := sorted({name for name in seen if seen.count(name) > 1}):
        raise BaccaratError(f"system {twice[0]!r} is given twice")
    check_run(out, run)
    return Plan(run, rule_set, systems, out, partitions)


def _system_for(name: str, session: dict, rule_set: RuleSet) -> System:
    system = load_system(name).with_session(**session).check_rules(rule_set.bets)
    check_bounded(system)
    for kind in system.sides:
        check_exact_cents(system, net_cents_table(kind, rule_set.bets[kind]).tolist())
    return system


def write_range(plan: Plan, first: int, last: int,
                report_batch: Callable[[int, int], None] = lambda shoes, sessions: None) -> dict:
    """Play and write the sessions of every system that start in shoes [first, last) as one file; runs
    inside a Spark task. report_batch(shoes, sessions) hears after each system written."""
    ahead = read_rounds(plan.out, plan.run, plan.kinds, first, last)
    end = len(ahead)
    ahead = ahead.then(_forward(plan, last))
    summaries = {}

    def batches():
        for system in plan.systems:
            rows, summaries[system.name] = _sessions_of(plan, system, first, ahead, end)
            yield last - first, (rows,)

    name = part_name(first, last, content_key(plan.parameters()))
    files = write_files(plan.out, plan.run_id, name, plan.job, plan.tables, batches(), report_batch,
                        compression="zstd")
    return {"first_shoe": first, "last_shoe": last - 1, "files": files, "summaries": summaries}


def _forward(plan: Plan, last: int) -> Rounds:
    """The rounds from shoe `last` on, whole shoes, enough to finish every session that starts before
    it (or every round to the run's end)."""
    shoes = 1
    while True:
        later = read_rounds(plan.out, plan.run, plan.kinds, last, min(plan.shoes, last + shoes))
        if last + shoes >= plan.shoes or all(_covers(system, later.winners) for system in plan.systems):
            return later
        shoes *= 2


def _covers(system: System, winners: np.ndarray) -> bool:
    """Whether `winners` after a range end hold every round a session started before it may consume,
    and the next shoe's first round, which ends a session that may not span shoes."""
    if not system.session.span_shoes:
        return len(winners) > 0
    if system.session.ties_count:
        return len(winners) >= system.session.max_rounds
    return np.count_nonzero(winners != TIE) >= system.session.max_rounds


def _sessions_of(plan: Plan, system: System, first: int, ahead: Rounds, end: int) -> tuple[pa.Table, dict]:
    """The rows of the system's sessions starting in rounds [0, end) of `ahead` (shoes from `first`
    on), and their summary."""
    entry = _entry(plan, system, first, ahead)
    sessions = play_sessions(system, *ahead.arguments(), entry, end)
    return session_rows(system, ahead, sessions), _summary(sessions)


def _entry(plan: Plan, system: System, first: int, ahead: Rounds) -> int:
    """The index in `ahead` (rounds from shoe `first` on) of the first session starting there: from a
    look-back window of whole shoes before it, doubled until the chains agree or the run's first round
    is nearer (in cost) than the chains through the window."""
    if first == 0 or not system.session.span_shoes:
        return 0
    shoes = LOOKBACK_SHOES
    while True:
        # A window's chains may cost up to H + 1 times its rounds; one chain from the run's first round
        # costs the rounds before the range: the cheaper of the two.
        start = 0 if shoes * (system.session.max_rounds + 1) >= first else first - shoes
        rounds = read_rounds(plan.out, plan.run, plan.kinds, start, first).then(ahead)
        target = rounds.first_round_of(first)
        window = rounds.arguments(target + session_bound(system, rounds.winners, target) + 1)
        entry = first_start_at(play_sessions, system, *window, target, run_start=start == 0)
        if entry is not None:
            return entry - target
        shoes *= 2


def _money(cents: np.ndarray, valid: np.ndarray | None = None) -> list[Decimal | None]:
    return [Decimal(int(c)).scaleb(-2) if valid is None or valid[i] else None for i, c in enumerate(cents)]


def session_rows(system: System, rounds: Rounds, sessions: dict[str, np.ndarray]) -> pa.Table:
    """The sessions table's rows of play_sessions' result over `rounds`, as the contract orders them."""
    starts = sessions["start"]
    columns = {"system": [system.name] * len(starts), "first_shoe": rounds.shoe_ids[starts],
               "first_round": rounds.numbers[starts],
               "net": _money(sessions["end_bankroll"] - sessions["start_bankroll"]),
               "ended": [ENDINGS[code] for code in sessions["ended"]]}
    columns |= {name: _money(sessions[name]) for name in MONEY}
    columns |= {name: sessions[name] for name in ("rounds", "stakes", "table_max_hits")}
    columns |= {f"bankroll_after_{n}": _money(sessions[f"bankroll_after_{n}"], sessions["complete"])
                for n in CHECKPOINTS}
    schema = contract(SESSIONS).arrow()
    return pa.table([pa.array(columns[f.name], f.type) for f in schema], schema=schema)


def _summary(sessions: dict[str, np.ndarray]) -> dict:
    """What the command prints of a system's sessions: how many ended each way, and the exact net and
    wagered of the complete ones, in cents."""
    complete = sessions["complete"]
    net = sessions["end_bankroll"] - sessions["start_bankroll"]
    return {"endings": np.bincount(sessions["ended"], minlength=len(ENDINGS)).tolist(),
            "net": int(net[complete].sum()), "wagered": int(sessions["wagered"][complete].sum())}


def default_partitions(shoes: int, parallelism: int) -> int:
    return partitions_for(shoes, parallelism, SHOES_PER_TASK)
