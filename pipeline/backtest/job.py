"""The backtest job, on the job skeleton (pipeline.jobs): Spark schedules ranges of a committed run's
shoes as tasks. A first stage finds where each range's first session of each system begins (entries.py:
every range played from a guess, the guesses verified on the driver); then each task reads its shoes'
rounds from the run's committed files, plays every system's sessions that start in its range from
that exact entry, and writes one Parquet file; the driver commits every file to OUT/sessions in one
Delta transaction, in place of the run's earlier sessions rows (whatever systems they were of).
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal

import numpy as np
import pyarrow as pa

from pipeline.backtest.entries import Chain, check_bounded, exact_entries
from pipeline.backtest.rounds import Rounds, read_rounds, shoe_key
from pipeline.bets import net_cents_table
from pipeline.errors import BaccaratError
from pipeline.jobs import JobFailed, Written, content_key, new_tag
from pipeline.play import CHECKPOINTS, ENDINGS, check_exact_cents
from pipeline.session_kernel import play_sessions
from pipeline.rule_sets import RuleSet
from pipeline.runs import RunRecord, check_run, read_committed_run
from pipeline.schemas import contract
from pipeline.storage import Store
from pipeline.systems import System, load_system
from pipeline.tasks import part_name, partitions_for, run_ranges, shoe_ranges, write_files

SESSIONS = "sessions"
SHOES_PER_TASK = 10_000
TIE = 2  # play_sessions' winner code of a tie
MONEY = ("start_bankroll", "end_bankroll", "wagered", "wagered_banker", "wagered_player", "max_drawdown")


@dataclass(frozen=True)
class Plan:
    run: RunRecord  # the committed run's
    rule_set: RuleSet
    systems: tuple[System, ...]  # with the command's session parameters
    out: Store
    partitions: int | None = None  # None: chosen from the cluster's parallelism once Spark is up
    job: str = field(default_factory=new_tag)  # tags this job's temporary files
    entries: Mapping[int, Mapping[str, int]] = field(default_factory=dict)  # see with_entries
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

    def prepared(self, context) -> "Plan":
        return with_entries(self, context)

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
    ahead, end = _rounds_of(plan, first, last)
    summaries = {}

    def batches():
        for system in plan.systems:
            rows, summaries[system.name] = _sessions_of(plan, system, first, ahead, end)
            yield last - first, (rows,)

    name = part_name(first, last, content_key(plan.parameters()))
    files = write_files(plan.out, plan.run_id, name, plan.job, plan.tables, batches(), report_batch,
                        compression="zstd")
    return {"first_shoe": first, "last_shoe": last - 1, "files": files, "summaries": summaries}


def _rounds_of(plan: Plan, first: int, last: int) -> tuple[Rounds, int]:
    """The rounds of shoes [first, last) and the rounds after them that a session starting there may
    consume; how many are the range's."""
    ahead = read_rounds(plan.out, plan.run, plan.kinds, first, last)
    return ahead.then(_forward(plan, last)), len(ahead)


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
    on), from the range's exact entry, and their summary."""
    known = plan.entries.get(first, {}).get(system.name)  # none for the first range, or sessions within shoes
    entry = 0 if known is None else _index_of(ahead, known)
    sessions = play_sessions(system, *ahead.arguments(), entry, end)
    return session_rows(system, ahead, sessions), _summary(sessions)


def _index_of(rounds: Rounds, key: int) -> int:
    """The index in `rounds` of the round of key `key` (of the round after the last held when past them)."""
    return int(np.searchsorted(rounds.keys(), key))


def play_chains(plan: Plan, first: int, last: int, asked: Mapping[str, int | None]) -> dict:
    """Inside a Spark task: the chain each system of `asked` follows over shoes [first, last) from the
    round of the key asked, or from the range's first round for None (see entries.py)."""
    ahead, end = _rounds_of(plan, first, last)
    keys = np.append(ahead.keys(), shoe_key(plan.shoes))  # the run's end after its last round
    chains = {}
    for system in plan.systems:
        if system.name in asked:
            entry = 0 if asked[system.name] is None else _index_of(ahead, asked[system.name])
            sessions = play_sessions(system, *ahead.arguments(), entry, end)
            starts = sessions["start"]
            exit_index = int(starts[-1] + sessions["rounds"][-1]) if len(starts) else entry
            chains[system.name] = Chain(keys[starts], int(keys[exit_index]))
    return {"first_shoe": first, "chains": chains}


def with_entries(plan: Plan, context) -> Plan:
    """The plan with every range's exact entry for each system whose sessions span shoes, found by a
    first Spark stage (and a few small ones where the guesses missed), see entries.py."""
    names = [system.name for system in plan.systems if system.session.span_shoes]
    ranges = dict(plan.ranges())
    if not names or len(ranges) == 1:
        return plan
    firsts = list(ranges)

    def chains_from(asked: Mapping[int, Mapping[str, int | None]]) -> dict[int, dict[str, Chain]]:
        results = run_ranges(context, [(first, ranges[first]) for first in asked],
                             lambda first, last, _: play_chains(plan, first, last, asked[first]),
                             lambda result: 0, None,
                             lambda message: JobFailed(f"{plan.what} was not committed: a task failed reading "
                                                       f"{plan.out}: {message}"))
        return {result["first_shoe"]: result["chains"] for result in results}

    entries = exact_entries(chains_from, names, firsts, [shoe_key(last) for last in ranges.values()])
    return replace(plan, entries=entries)


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
