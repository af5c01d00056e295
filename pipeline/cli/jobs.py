"""The Spark jobs: simulate, composition, backtest and run (the whole pipeline), with progress for people."""

import functools
import shlex
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from decimal import Decimal
from typing import TYPE_CHECKING, Annotated

import typer

from pipeline.cli.analytics import marts, report
from pipeline.cli.app import (
    DEFAULT_OUT,
    MasterOption,
    OutOption,
    RulesOption,
    WarehouseOption,
    count,
    no_banque_banker_strategy,
    parse_decks,
)
from pipeline.cli.exact import warn_player_edges
from pipeline.config_files import absolute_paths
from pipeline.errors import BaccaratError
from pipeline.games.banque import DEFAULT_POLICY
from pipeline.marts.choices import ROAD_CELLS_SHOES, ROAD_STATS_SHOES, Engine
from pipeline.render import TextTable, show
from pipeline.rule_sets import DEFAULT_RULES, load_rule_set
from pipeline.simulate.limits import MAX_PARTITIONS, MAX_SEED, MAX_SHOES

if TYPE_CHECKING:  # the commands load the job machinery (pyarrow, Delta Lake, Spark) when they run
    from pipeline.runs import RunRecord
    from pipeline.storage import Store

ShoesOption = Annotated[int, typer.Option(min=1, max=MAX_SHOES, help="How many shoes to deal (at most 10**10).")]
SeedOption = Annotated[int, typer.Option(min=0, max=MAX_SEED, help=(
    "Run seed, 0 to 2**64-1; required here (`baccarat run` deals seed 1 when none is given)."))]
RunSeedOption = Annotated[int, typer.Option(min=0, max=MAX_SEED, help=(
    "Run seed, 0 to 2**64-1 (`baccarat simulate` requires one)."))]


class Reporter:
    """Progress for people, on stderr (stdout is the command's result, which a pipe may stop reading early):
    a live bar on a terminal, otherwise a plain log line every few seconds while the shoes dealt change."""

    def __init__(self, what: str, total: int, live: bool, note: str = "", rows: str = "rounds"):
        self.what, self.total, self.live, self.note, self.rows = what, total, live, note, rows
        self.started = self.last_line = time.monotonic()
        self.bar, self.shown = None, None
        if live:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                Progress,
                TextColumn,
                TimeRemainingColumn,
            )

            self.bar = Progress(TextColumn("{task.description}"), BarColumn(),
                                TextColumn("{task.completed:,}/{task.total:,} shoes {task.fields[speed]}"),
                                TimeRemainingColumn(), console=Console(stderr=True))
            self.task = self.bar.add_task(what + note, total=total, speed="")
            self.bar.start()

    def __call__(self, shoes: int, rows: int) -> None:
        elapsed = max(time.monotonic() - self.started, 1e-9)
        speed = _rate(rows / elapsed, self.rows)
        if self.bar:
            self.bar.update(self.task, completed=shoes, speed=speed)
        elif shoes != self.shown and (time.monotonic() - self.last_line >= 5 or shoes == self.total):
            self.last_line, self.shown = time.monotonic(), shoes
            left = f"about {(self.total - shoes) * elapsed / shoes:.0f} s left" if shoes else "starting"
            print(f"{self.what}: {shoes:,}/{self.total:,} shoes, {speed}, {left}{self.note}", file=sys.stderr,
                  flush=True)

    def close(self) -> None:
        if self.bar:
            self.bar.stop()


def _rate(per_second: float, rows: str = "rounds") -> str:
    """A speed readable at any size: 0.00M rounds/s says nothing."""
    if per_second >= 1e5:
        return f"{per_second / 1e6:.2f}M {rows}/s"
    return f"{per_second:,.0f} {rows}/s"


def _run_on_spark(plan, master: str | None, what: str, shoes: int, default_partitions: Callable[[int, int], int],
                  rows: str = "rounds", overwrite: bool = False,
                  before_commit: Callable[[], None] | None = None) -> dict:
    """Start Spark, give the plan the cluster's partitions when it names none, and run it with progress
    (the speed in `rows`, what a row of the plan's first table is; `overwrite` and `before_commit`: as
    jobs.run_job's)."""
    from pipeline.jobs import run_job
    from pipeline.spark import spark_context

    context = spark_context(master, f"baccarat {what}")
    if plan.partitions is None:
        plan = replace(plan, partitions=default_partitions(shoes, context.defaultParallelism))
    reporters = [Reporter(what, shoes, live=sys.stderr.isatty(), rows=rows)]

    def again(shoes_again: int) -> Reporter:
        reporters[-1].close()
        note = f" (stage {len(reporters) + 1}: ranges whose entry was guessed wrong, played again)"
        reporters.append(Reporter(what, shoes_again, reporters[0].live, note, rows))
        return reporters[-1]

    try:
        return run_job(context, plan, reporters[0], again, overwrite, before_commit)
    finally:
        reporters[-1].close()


def leaves_no_empty_folder(command: Callable) -> Callable:
    """The command's local OUT, when the command created it (Store.check_writable does) and failed
    before writing anything into it, goes again, with the parent folders it created."""

    @functools.wraps(command)
    def guarded(*args, out: "Store" = DEFAULT_OUT, **kwargs):
        created = [] if not out.is_local else [folder for folder in (out.local_path(), *out.local_path().parents)
                                                if not folder.exists()]
        try:
            return command(*args, out=out, **kwargs)
        except BaseException:
            for folder in created:  # the deepest first; a folder that is not empty stays, and its parents
                try:
                    folder.rmdir()
                except OSError:
                    break
            raise

    return guarded


@leaves_no_empty_folder
def simulate(
    shoes: ShoesOption,
    seed: SeedOption,
    rules: RulesOption = DEFAULT_RULES,
    run_id: Annotated[str | None, typer.Option(help="Default: RULES-sSEED-nSHOES.")] = None,
    out: OutOption = DEFAULT_OUT,
    master: MasterOption = None,
    partitions: Annotated[int | None, typer.Option(
        min=1, max=MAX_PARTITIONS, help="Tasks, and files per table (at most 1,000,000).")] = None,
    overwrite: Annotated[bool, typer.Option(help="Replace a run id that exists with other parameters.")] = False,
    player_strategy: Annotated[str | None, typer.Option(
        help="Games with options: the Player's strategy, in conf/strategies by name or a YAML file; "
             "default the equilibrium of the rule set's shoe, the Banker seeing his cards. Baccarat banque: "
             "NAME for both hands or NAME1,NAME2.")] = None,
    banker_strategy: Annotated[str | None, typer.Option(
        help="Games with options: the Banker's strategy; default that equilibrium's.")] = None,
    banker_policy: Annotated[str | None, typer.Option(
        help=f"Baccarat banque: the Banker's policy, in conf/banque (default {DEFAULT_POLICY}).")] = None,
    decks: Annotated[int | None, typer.Option(
        parser=parse_decks, metavar="N|infinite",
        help="Baccarat banque: override the rule set's decks; `infinite` deals with replacement.")] = None,
) -> str:
    """Deal SHOES whole shoes in parallel Spark tasks into Delta tables (rounds, shoes, then runs); in a
    game with options (chemin de fer), with a strategy pair playing the choices; baccarat banque into
    OUT/banque_rounds.

    Spark's output goes to a log file (in BACCARAT_LOG_DIR); BACCARAT_SPARK_LOG_LEVEL=INFO shows it on stderr."""
    rule_set = load_rule_set(rules)
    if rule_set.two_hands is not None:
        return _simulate_banque(rule_set, shoes, seed, run_id, out, overwrite, master, partitions, player_strategy,
                                banker_strategy, banker_policy, decks)
    if decks is not None or banker_policy is not None:
        raise BaccaratError("--decks and --banker-policy are for baccarat banque (--rules banque)")
    return _simulate_one_hand(rule_set, shoes, seed, run_id, out, overwrite, master, partitions, player_strategy,
                              banker_strategy)


def _simulate_one_hand(rule_set, shoes: int, seed: int, run_id: str | None, out: "Store", overwrite: bool,
                       master: str | None, partitions: int | None, player_strategy: str | None,
                       banker_strategy: str | None) -> str:
    from pipeline.exact import exact_odds
    from pipeline.games.pairs import strategy_pair
    from pipeline.games.strategies import shown_name
    from pipeline.jobs import already_committed, held_rows
    from pipeline.simulate import job

    strategies = strategy_pair(rule_set, player_strategy, banker_strategy)
    if strategies is None:
        warn_player_edges(exact_odds(rule_set))
    else:
        print(f"{rule_set.name}: the Player plays {shown_name(strategies.player)}, "
              f"the Banker {shown_name(strategies.banker)}")
    plan = job.plan_for(out, rule_set, seed, shoes, run_id, partitions, strategies)
    _print_repairs(out, overwrite)
    # a run the runs table lost, with no row file left to commit again, is replaced by the one dealt
    held = held_rows(plan) if overwrite else None
    if already_committed(plan, overwrite, print):
        print(f"run {plan.run_id!r} is already committed with these parameters in {out}: nothing to do")
        return plan.run_id
    started, dropped = time.monotonic(), []
    record = _run_on_spark(plan, master, f"simulate {plan.run_id}", shoes, job.default_partitions, overwrite=overwrite,
                           before_commit=_dropping_replaced_run(out, plan.run_id, dropped) if held == "other" else None)
    _summary(record, out, time.monotonic() - started)
    if held == "other":
        _forget_replaced_run(out, plan.run_id, *dropped)
    elif held == "own":
        print(f"run {plan.run_id!r} dealt again as it was committed: what was built from its rows (marts, round_ev, "
              "sessions) stands")
    return plan.run_id


def _simulate_banque(rule_set, shoes: int, seed: int, run_id: str | None, out: "Store", overwrite: bool,
                     master: str | None, partitions: int | None, player_strategy: str | None,
                     banker_strategy: str | None, banker_policy: str | None, decks) -> str:
    from pipeline.jobs import already_committed
    from pipeline.simulate import banque as banque_job

    no_banque_banker_strategy(banker_strategy)
    plan = banque_job.plan_for(out, rule_set, seed, shoes, run_id, decks, banker_policy, player_strategy, partitions)
    run, table = plan.run, out.location(banque_job.TABLE)
    _print_repairs(out, overwrite)
    if already_committed(plan, overwrite, print):
        print(f"run {run.run_id!r} is already committed with these parameters in {table}: nothing to do")
        return run.run_id
    started = time.monotonic()
    result = _run_on_spark(plan, master, f"simulate {run.run_id}", shoes, banque_job.default_partitions, overwrite=overwrite)
    print(f"committed banque run {run.run_id!r}: {run.shoes:,} shoes, {result.rounds:,} rounds in "
          f"{time.monotonic() - started:.1f} s; {table} version {result.versions[banque_job.TABLE]}")
    return run.run_id


def _print_repairs(out: "Store", overwrite: bool) -> None:
    """With --overwrite, the data tables' logs are repaired first: a line for each repair."""
    from pipeline.repair import repair_data_tables

    for line in repair_data_tables(out) if overwrite else ():
        print(line)


def _summary(record: "RunRecord", out: "Store", seconds: float) -> None:
    rounds = record.rounds
    shares = ", ".join(f"{k} {v / rounds:.4%}" for k, v in record.outcomes.items())
    print(f"committed run {record.run_id!r}: {record.shoes:,} shoes, {rounds:,} rounds ({shares})")
    print(f"{len(record.files)} files in {seconds:.1f} s ({_rate(rounds / seconds)}); "
          f"rounds version {record.versions['rounds']}, shoes version {record.versions['shoes']}, "
          f"row in {out.location('runs')}")


def _dropping_replaced_run(out: "Store", run_id: str, dropped: list) -> Callable[[], None]:
    """A job's before_commit: the replaced run's marts, round_ev and sessions rows go before the new run's
    commits (what they held appended to `dropped`), so that a Ctrl-C after those leaves none of them."""
    from pipeline.marts.replaced import drop_replaced_run

    return lambda: dropped.append(drop_replaced_run(out, run_id))


def _forget_replaced_run(out: "Store", run_id: str, dropped: tuple[bool, bool] = (False, False)) -> None:
    from pipeline.marts.replaced import forget_replaced_run

    forgotten = forget_replaced_run(out, run_id, dropped)
    where = shlex.join(["--run-id", run_id, "--out", out.uri])
    print(f"the marts of the replaced run {run_id!r} are removed: until `baccarat marts {where}` builds the new "
          "run's, the warehouse leaves the run out (its rounds and shoes views too) and `baccarat runs` says so")
    if forgotten.round_ev:
        print(f"its exact odds before each round are removed: run `baccarat composition {where}`")
    if forgotten.sessions:
        print(f"its betting-system sessions are removed: run `baccarat backtest {where} --systems ...`")
    _published_again(forgotten)


def _dropping_stale_marts(out: "Store", run_id: str, command: str, restored: bool,
                          dropped: list) -> Callable[[], None] | None:
    """A job's before_commit: the run's marts built from the rows `command` replaces go before its commit
    (whether any held the run appended to `dropped`); none when it writes the committed rows again."""
    from pipeline.marts.replaced import drop_stale_marts

    return None if restored else lambda: dropped.append(drop_stale_marts(out, run_id, command))


def _forget_stale_marts(out: "Store", run_id: str, command: str, restored: bool, dropped: list) -> None:
    """The run's marts built from the rows `command` replaced go; none when it wrote the committed rows again."""
    from pipeline.marts.replaced import forget_stale_marts

    if restored:
        print(f"the rows written again are those committed: the run's {command} marts, if built, stand")
    elif forgotten := forget_stale_marts(out, run_id, command, any(dropped)):
        where = shlex.join(["--run-id", run_id, "--out", out.uri])
        print(f"the run's {command} marts, built from the rows these replaced, are removed: "
              f"`baccarat marts {where}` builds them anew")
        _published_again(forgotten)


def _published_again(forgotten) -> None:
    if forgotten.warehouse is not None:
        for line in forgotten.left_out:
            print(f"warning: {line}", file=sys.stderr)
        print(f"published {forgotten.warehouse} again")


def composition(
    run_id: Annotated[str, typer.Option(help="The committed run whose rounds are analysed.")],
    out: OutOption = DEFAULT_OUT,
    shoes: Annotated[int | None, typer.Option(
        min=1, max=MAX_SHOES, help="Only the run's first N shoes; default every shoe.")] = None,
    counts: Annotated[str | None, typer.Option(
        metavar="NAME,...", help="Count systems: names in conf/counts or paths of .yaml files; default every "
        "shipped one whose bets the run's rule set offers.")] = None,
    master: MasterOption = None,
    partitions: Annotated[int | None, typer.Option(
        min=1, max=MAX_PARTITIONS, help="Tasks, and files (at most 1,000,000).")] = None,
) -> None:
    """Exact EV of every bet before every round of a committed run, from the cards a player has not
    seen, with the running and true counts of count systems: the Delta table OUT/round_ev."""
    from pipeline.composition import job as composition_job
    from pipeline.jobs import already_committed, held_rows
    from pipeline.repair import repair_added_log
    from pipeline.runs import check_run_id

    plan = replace(composition_job.plan_for(out.check_readable(), check_run_id(run_id), shoes, counts, partitions),
                   given=_given(shoes=shoes, counts=None if counts is None else absolute_paths(counts)))
    out.check_writable()
    for line in repair_added_log(out, composition_job.ROUND_EV):
        print(line)
    if already_committed(plan, overwrite=False):
        print(f"round_ev of run {run_id!r} is already committed for these shoes and count systems in {out}: "
              "nothing to do")
        return
    restored, dropped = held_rows(plan) == "own", []
    started = time.monotonic()
    result = _run_on_spark(plan, master, f"composition {run_id}", plan.shoes, composition_job.default_partitions,
                           before_commit=_dropping_stale_marts(out, run_id, "composition", restored, dropped))
    seconds = time.monotonic() - started
    print(f"committed round_ev of run {run_id!r}: {count(result['shoes'], 'shoe')}, "
          f"{count(result['rounds'], 'round')}, {count(len(result['files']), 'file')} in {seconds:.1f} s ({_rate(result['rounds'] / seconds)}); version "
          f"{result['version']} of {out.location(composition_job.ROUND_EV)}; count systems: "
          f"{', '.join(result['counts']) or 'none'}")
    _forget_stale_marts(out, run_id, "composition", restored, dropped)


def _given(**options) -> tuple[str, ...]:
    """The options a job was given that decide its rows (None: not given), as the words of its command line, a
    list's each after the option repeated: its commit records them, so that the repair line repeats them (a
    count or betting system's path made absolute by the caller: the line pastes in any folder)."""
    return tuple(word for name, value in options.items() if value is not None
                 for each in (value if isinstance(value, list) else [value])
                 for word in (f"--{name.replace('_', '-')}", str(each)))


def backtest(
    run_id: Annotated[str, typer.Option(help="The committed run whose rounds the systems play.")],
    systems: Annotated[list[str], typer.Option(
        metavar="NAME,...", help="Betting systems: names in conf/systems or paths of .yaml files (the option "
        "repeated, or names separated by commas).")],
    bankroll: Annotated[str | None, typer.Option(
        metavar="AMOUNT", help="Each session's bankroll, in place of each system's.")] = None,
    goal: Annotated[str | None, typer.Option(metavar="AMOUNT", help="Stop once the bankroll has won this much.")] = None,
    stop_loss: Annotated[str | None, typer.Option(
        metavar="AMOUNT", help="Stop once the bankroll has lost this much.")] = None,
    max_rounds: Annotated[int | None, typer.Option(help="Stop after this many rounds.")] = None,
    out: OutOption = DEFAULT_OUT,
    master: MasterOption = None,
    partitions: Annotated[int | None, typer.Option(
        min=1, max=MAX_PARTITIONS, help="Tasks, and files (at most 1,000,000).")] = None,
) -> None:
    """Play betting systems over every round of a committed run, session after session in run order,
    each from a fresh bankroll: the Delta table OUT/sessions, in place of the run's earlier sessions."""
    from pipeline.backtest import job as backtest_job
    from pipeline.jobs import already_committed, held_rows
    from pipeline.repair import repair_added_log
    from pipeline.runs import check_run_id

    names = _system_names(systems)
    session = {"bankroll": bankroll, "goal": goal, "stop_loss": stop_loss, "max_rounds": max_rounds}
    plan = replace(backtest_job.plan_for(out.check_readable(), check_run_id(run_id), names, session, partitions),
                   given=_given(systems=[absolute_paths(given) for given in systems], **session))
    out.check_writable()
    for line in repair_added_log(out, backtest_job.SESSIONS):
        print(line)
    if already_committed(plan, overwrite=False):
        print(f"sessions of run {run_id!r} are already committed for these systems in {out}: nothing to do")
        return
    restored, dropped = held_rows(plan) == "own", []
    started = time.monotonic()
    result = _run_on_spark(plan, master, f"backtest {run_id}", plan.shoes, backtest_job.default_partitions,
                           "sessions", before_commit=_dropping_stale_marts(out, run_id, "backtest", restored, dropped))
    show(_sessions_table(run_id, result["summaries"]))
    print(f"committed sessions of run {run_id!r}: {count(result['sessions'], 'session')}, "
          f"{count(len(result['files']), 'file')} in {time.monotonic() - started:.1f} s; version {result['version']} "
          f"of {out.location(backtest_job.SESSIONS)}")
    _forget_stale_marts(out, run_id, "backtest", restored, dropped)


def _system_names(systems: list[str]) -> list[str]:
    """The names of --systems, given repeated or separated by commas; an empty one is a one-line error."""
    names = [name.strip() for given in systems for name in given.split(",")]
    if "" in names:
        raise BaccaratError(f"--systems {','.join(systems)!r}: an empty name (give NAME,NAME,... of conf/systems "
                            "or .yaml paths)")
    return names


def _sessions_table(run_id: str, summaries: dict[str, dict]) -> TextTable:
    """One line per system: its sessions by how they ended, and the net per unit wagered of the complete ones."""
    from pipeline.play import ENDINGS

    table = TextTable(f"sessions over run {run_id!r}", ("system", "sessions", *ENDINGS, "net / wagered"),
                      left=frozenset({"system"}))
    for name, summary in summaries.items():
        edge = f"{Decimal(summary['net']) / summary['wagered']:.4%}" if summary["wagered"] else "-"
        table.add(name, f"{sum(summary['endings']):,}", *(f"{n:,}" for n in summary["endings"]), edge)
    return table


def run(
    shoes: Annotated[int, typer.Option(min=1, max=MAX_SHOES, help="How many shoes to deal (at most 10**10).")] = 20_000,
    rules: RulesOption = DEFAULT_RULES,
    seed: RunSeedOption = 1,
    out: OutOption = DEFAULT_OUT,
    master: MasterOption = None,
    warehouse: WarehouseOption = None,
) -> None:
    """The whole pipeline: simulate, marts, warehouse and report; then where everything is."""
    if load_rule_set(rules).two_hands is not None:
        raise BaccaratError("the marts and the report read one-hand rounds (OUT/rounds): deal baccarat banque with "
                            "`baccarat simulate --rules banque` (OUT/banque_rounds)")
    from pipeline.marts.publish import check_warehouse_path

    warehouse = check_warehouse_path(warehouse or out.warehouse_path())
    run_id = simulate(shoes=shoes, seed=seed, rules=rules, run_id=None, out=out, master=master,
                      partitions=None, overwrite=False)
    marts(out=out, run_id=[run_id], engine=Engine.duckdb, warehouse=warehouse, road_cells_shoes=ROAD_CELLS_SHOES,
          road_stats_shoes=ROAD_STATS_SHOES)
    page = report(out=out, run_id=run_id, shoe_id=None, warehouse=warehouse, page=None)
    print(f"\nrun {run_id!r} is ready:\n"
          f"  rounds and shoes  {out.location('rounds')}, {out.location('shoes')} (Delta tables); the run's row "
          f"in {out.location('runs')}\n"
          f"  dashboard tables  {out.location('marts')} (Delta tables) and {warehouse}\n"
          f"  report            {page}\n"
          f"  query it          baccarat sql --warehouse {shlex.quote(str(warehouse))} "
          f"{shlex.quote('SELECT * FROM bet_performance')}")
