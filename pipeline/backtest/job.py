"""The backtest job, on the job skeleton (pipeline.jobs): Spark schedules ranges of a committed run's
shoes as tasks; each task reads its shoes' rounds from the run's committed files, plays every system's
sessions that start in its range (from a guess of where the first one begins, see entries.py), and
writes one Parquet file; the driver checks every range's guesses against the range before it, has the
ranges guessed wrong written again from their true entries, and commits every file to OUT/sessions in
one Delta transaction, in place of the run's earlier sessions rows (whatever systems they were of).
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal
from math import ceil

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.backtest.entries import check_bounded, play_range, settle
from pipeline.backtest.rounds import Rounds, read_rounds, shoe_key
from pipeline.bets import net_cents_table
from pipeline.errors import BaccaratError
from pipeline.jobs import JobPlan, Written, new_tag
from pipeline.orphans import readable_run
from pipeline.play import CENTS, CHECKPOINTS, ENDINGS, SESSION_RULES_VERSION, check_exact_cents
from pipeline.rule_sets import RuleSet
from pipeline.runs import RunRecord, check_run
from pipeline.schemas import contract
from pipeline.session_kernel import TIE
from pipeline.storage import Store
from pipeline.systems import SYSTEMS_PLAYED, System, known_systems, load_system
from pipeline.tasks import content_key, options_record, part_name, partitions_for, shoe_ranges, write_files

SESSIONS = "sessions"
SHOES_PER_TASK = 10_000
LOOKBACK_SESSIONS = 150  # of the longest sessions: chains from a guess mostly meet the true chain within it
ROUNDS_PER_SHOE = 80  # about, in an eight-deck shoe: turns LOOKBACK_SESSIONS into shoes
MONEY_TYPE = pa.decimal128(18, 2)  # the sessions contract's amounts
LARGEST_CENTS = 10**18 - 1  # MONEY_TYPE's, the marts' sums over sessions too; below int64's 9.2e18
MONEY = ("start_bankroll", "end_bankroll", "wagered", "wagered_banker", "wagered_player", "max_drawdown")


@dataclass(frozen=True)
class Kept:
    """What a range played again keeps of its file as last written: the rows of the systems whose
    entries were right (a session is a function of its start alone), with their entries, exits and
    summaries."""
    path: str  # the file's, under OUT
    systems: Mapping[str, tuple[int, int, dict]]  # {system: (entry, exit, summary)}


@dataclass(frozen=True)
class Plan(JobPlan):
    run: RunRecord  # the committed run's
    rule_set: RuleSet
    systems: tuple[System, ...]  # with the command's session parameters
    out: Store
    partitions: int | None = None  # None: chosen from the cluster's parallelism once Spark is up
    job: str = field(default_factory=new_tag)  # tags this job's temporary files
    entries: Mapping[int, Mapping[str, int]] = field(default_factory=dict)  # {first shoe: {system: key}} when known
    kept: Mapping[int, Kept] = field(default_factory=dict)  # {first shoe: what a range played again keeps}
    lookback_sessions: int = LOOKBACK_SESSIONS
    given: tuple[str, ...] | None = None  # --systems and session options, paths absolute (its commit records them)
    tables = (SESSIONS,)
    application = "baccarat-backtest"
    in_runs = False
    overwrite_needed = False  # the rows describe the run: a backtest of other systems replaces them

    @property
    def what(self) -> str:
        return f"the backtest of run {self.run_id!r}"

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
        """The rows depend on the run, the systems and the rules of a session alone, so equal content keys
        mean equal rows whatever the partitions."""
        return {"run": self.run.parameters, "systems": [system.model_dump(mode="json") for system in self.systems],
                "session_rules": SESSION_RULES_VERSION}

    def write_range(self, first: int, last: int, report_batch: Callable[[int, int], None]) -> dict:
        return write_range(self, first, last, report_batch)

    def commit_metadata(self, table: str) -> dict:
        """Each system's unit and bet as played (None for a chooser's), which the system marts take: the
        system's file may be edited, or another file take its name, after the sessions were played; and the
        options the command was given (OPTIONS_GIVEN), which the repair line of the rows repeats."""
        return {SYSTEMS_PLAYED: {system.name: system.played_terms() for system in self.systems}} | \
            options_record(self.given)

    def settled(self, results: list[dict], rewrite: Callable) -> list[dict]:
        return settled(self, results, rewrite)

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
    run, rule_set = readable_run(out, run_id)
    systems = tuple(_system_for(name, session, rule_set) for name in names)
    seen = [system.name for system in systems]
    if twice := sorted({name for name in seen if seen.count(name) > 1}):
        raise BaccaratError(f"system {twice[0]!r} is given twice")
    check_run(out, run)
    for system in systems:
        check_totals_fit(system, rule_set, run.rounds)
    return Plan(run, rule_set, in_name_order(systems), out, partitions)


def in_name_order(systems: tuple[System, ...]) -> tuple[System, ...]:
    """The systems by name: the rows, and the content key a rerun compares, do not depend on the order
    --systems gave them in (the same systems in another order played the run again and took its marts)."""
    return tuple(sorted(systems, key=lambda system: system.name))


def _system_for(name: str, session: dict, rule_set: RuleSet) -> System:
    loaded = load_system(name)
    if name != loaded.name and loaded.name in known_systems() and loaded != load_system(loaded.name):
        raise BaccaratError(f"system {name!r} is named {loaded.name!r}, like a shipped one it differs from: rename "
                            "it, so that the marts do not take the shipped system's unit and bet for it")
    system = loaded.with_session(**session).check_rules(rule_set.bets)
    check_bounded(system)
    for kind in system.sides:
        check_exact_cents(system, net_cents_table(kind, rule_set.bets[kind]).tolist())
    return system


def largest_total_cents(system: System, rule_set: RuleSet, rounds: int) -> int:
    """A bound on every amount of the system's sessions over `rounds` rounds, in cents: no stake is above
    the table maximum and sessions never share a round, so the stakes add up to at most rounds times the
    maximum (wagered, in a session and summed over them), their wins and losses to at most that times the
    largest payout (net, summed over sessions), and a bankroll to at most its start plus the wins."""
    payout = max(CENTS, *(max(net_cents_table(kind, rule_set.bets[kind]).tolist()) for kind in system.sides))
    stakes = rounds * int(system.table.maximum * CENTS)
    return int(system.session.bankroll * CENTS) + stakes * payout // CENTS


def check_totals_fit(system: System, rule_set: RuleSet, rounds: int) -> None:
    """Refuse, in one line, a system whose amounts over a run of `rounds` rounds could pass decimal(18,2)
    (the sessions table's and the marts' sums; the compiled loop's int64 cents wrap silently past 2**63)."""
    if largest_total_cents(system, rule_set, rounds) > LARGEST_CENTS:
        raise BaccaratError(f"system {system.name!r}: a table maximum of {system.table.maximum} over the run's "
                            f"{rounds:,} rounds could take its totals past {MONEY_TYPE} (largest "
                            f"{Decimal(LARGEST_CENTS).scaleb(-2):,}): lower the table maximum or backtest a shorter run")


def write_range(plan: Plan, first: int, last: int,
                report_batch: Callable[[int, int], None] = lambda shoes, sessions: None) -> dict:
    """Play and write the sessions of every system that start in shoes [first, last) as one file; runs
    inside a Spark task. report_batch(shoes, sessions) hears after each system written. The result
    holds each system's entry and exit (entries.py), which the driver checks."""
    rounds, keys, begin, end = _task_rounds(plan, first, last)
    summaries, entries, exits = {}, {}, {}
    kept = plan.kept.get(first)
    kept_rows = _kept_rows(plan.out, kept) if kept else {}

    def batches():
        for system in plan.systems:
            if system.name in kept_rows:
                entries[system.name], exits[system.name], summaries[system.name] = kept.systems[system.name]
                yield last - first, (kept_rows[system.name],)
                continue
            known = plan.entries.get(first, {}).get(system.name)
            sessions, entries[system.name], exits[system.name] = play_range(
                system, rounds.arguments(), keys, begin, end, known)
            summaries[system.name] = _summary(sessions)
            yield last - first, (session_rows(system, rounds, sessions),)

    name = part_name(first, last, content_key(plan.parameters()))
    files = write_files(plan.out, plan.run_id, name, plan.job, plan.tables, batches(), report_batch,
                        compression="zstd")
    return {"first_shoe": first, "last_shoe": last - 1, "files": files, "summaries": summaries,
            "entries": entries, "exits": exits}


def _lookback(plan: Plan, first: int) -> int:
    """How many shoes before `first` a task reads to guess where its first sessions begin: none when
    the entries are known or no session spans shoes."""
    spans = [system.session.max_rounds for system in plan.systems if system.session.span_shoes]
    if first in plan.entries or not spans:
        return 0
    return min(first, ceil(plan.lookback_sessions * max(spans) / ROUNDS_PER_SHOE))


def settled(plan: Plan, results: list[dict],
            rewrite: Callable[[Plan, list[tuple[int, int]]], list[dict]]) -> list[dict]:
    """The tasks' results once every range's entries are verified; rewrite(plan, ranges) runs the
    plan's tasks again over those ranges (entries.settle), playing only the systems whose entries were
    wrong and keeping the others' rows."""
    ranges = plan.ranges()

    def play_again(asked: dict[int, tuple[dict, dict[str, int]]]) -> list[dict]:
        entries, kept = {}, {}
        for index, (result, true_entries) in asked.items():
            first = ranges[index][0]
            right = {name for name, key in true_entries.items() if result["entries"][name] == key}
            entries[first] = {name: key for name, key in true_entries.items() if name not in right}
            kept[first] = Kept(result["files"][0]["path"], {name: (result["entries"][name], result["exits"][name],
                                                                  result["summaries"][name]) for name in right})
        done = {result["first_shoe"]: result
                for result in rewrite(replace(plan, entries=entries, kept=kept), [ranges[index] for index in asked])}
        return [done[ranges[index][0]] for index in asked]

    return settle(sorted(results, key=lambda result: result["first_shoe"]), play_again)


def _kept_rows(out: Store, kept: Kept) -> dict[str, pa.Table]:
    """The kept systems' rows of a range's file, each system's checked against its summary's sessions
    (an OSError, which the job turns into its one line)."""
    schema = contract(SESSIONS).arrow()
    rows = out.read_file_rows(kept.path).select(schema.names).cast(schema)
    tables = {name: rows.filter(pc.equal(rows["system"], name)) for name in kept.systems}
    for name, (_, _, summary) in kept.systems.items():
        if tables[name].num_rows != sum(summary["endings"]):
            raise OSError(f"{out.location(kept.path)} changed while the backtest ran: it holds "
                          f"{tables[name].num_rows:,} sessions of {name!r}, its task wrote {sum(summary['endings']):,}")
    return tables


def _task_rounds(plan: Plan, first: int, last: int) -> tuple[Rounds, np.ndarray, int, int]:
    """The rounds a task plays, read once: the look-back before shoe `first`, shoes [first, last), and
    after them whole shoes enough to finish every session that starts before `last` (or every round to
    the run's end). With each round's key and one more, the run's end; where the range's rounds begin
    and end."""
    since, shoes_after = first - _lookback(plan, first), _shoes_after(plan)
    while True:
        until = min(plan.shoes, last + shoes_after)
        rounds = read_rounds(plan.out, plan.run, plan.kinds, since, until)
        keys = np.append(rounds.keys(), shoe_key(plan.shoes))
        begin, end = np.searchsorted(keys, [shoe_key(first), shoe_key(last)]).tolist()
        if until == plan.shoes or all(_covers(system, rounds.winners[end:]) for system in plan.systems):
            return rounds, keys, begin, end
        shoes_after *= 2


def _shoes_after(plan: Plan) -> int:
    """The shoes after a range that most likely hold every round its last sessions may consume."""
    spans = [system.session.max_rounds for system in plan.systems if system.session.span_shoes]
    return 1 + ceil(max(spans, default=0) / ROUNDS_PER_SHOE)


def _covers(system: System, winners: np.ndarray) -> bool:
    """Whether `winners` after a range end hold every round a session started before it may consume,
    and the next shoe's first round, which ends a session that may not span shoes."""
    if not system.session.span_shoes:
        return len(winners) > 0
    if system.session.ties_count:
        return len(winners) >= system.session.max_rounds
    return np.count_nonzero(winners != TIE) >= system.session.max_rounds


def _money(cents: np.ndarray, valid: np.ndarray | None = None) -> pa.Array:
    """Amounts in cents as exact decimals of two places, null where not `valid`: a decimal128 holds its
    unscaled integer, the cents, as two 64-bit words, low word first."""
    words = np.empty((len(cents), 2), dtype=np.int64)
    words[:, 0], words[:, 1] = cents, cents >> 63  # the high word extends the sign
    money = pa.Array.from_buffers(MONEY_TYPE, len(cents), [None, pa.py_buffer(words)])
    return money if valid is None else pc.if_else(pa.array(valid), money, pa.scalar(None, MONEY_TYPE))


def session_rows(system: System, rounds: Rounds, sessions: dict[str, np.ndarray]) -> pa.Table:
    """The sessions table's rows of play_sessions' result over `rounds`, as the contract orders them."""
    starts = sessions["start"]
    columns = {"system": pa.repeat(system.name, len(starts)), "first_shoe": rounds.shoe_ids[starts],
               "first_round": rounds.numbers[starts],
               "net": _money(sessions["end_bankroll"] - sessions["start_bankroll"]),
               "ended": pc.take(pa.array(ENDINGS), pa.array(sessions["ended"]))}
    columns |= {name: _money(sessions[name]) for name in MONEY}
    columns |= {name: sessions[name] for name in ("rounds", "stakes", "table_max_hits")}
    columns |= {f"bankroll_after_{n}": _money(sessions[f"bankroll_after_{n}"], sessions["complete"])
                for n in CHECKPOINTS}
    schema = contract(SESSIONS).arrow()
    return pa.table([pa.array(columns[f.name], f.type) if isinstance(columns[f.name], np.ndarray)
                     else columns[f.name].cast(f.type) for f in schema], schema=schema)


def _summary(sessions: dict[str, np.ndarray]) -> dict:
    """What the command prints of a system's sessions: how many ended each way, and the exact net and
    wagered of the complete ones, in cents."""
    complete = sessions["complete"]
    net = sessions["end_bankroll"] - sessions["start_bankroll"]
    return {"endings": np.bincount(sessions["ended"], minlength=len(ENDINGS)).tolist(),
            "net": int(net[complete].sum()), "wagered": int(sessions["wagered"][complete].sum())}


def default_partitions(shoes: int, parallelism: int) -> int:
    return partitions_for(shoes, parallelism, SHOES_PER_TASK)
