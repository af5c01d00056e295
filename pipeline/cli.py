"""`baccarat`: the one command line, dispatching the jobs. All printing for people happens here."""

import functools
from collections.abc import Callable
import json
import os
import shlex
import sys
import time
from dataclasses import replace
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from pipeline import risk as risk_model
from pipeline.cards import MAX_DECKS, MIN_DECKS, decks_text
from pipeline.composition import job as composition_job
from pipeline.errors import BaccaratError, PipelineError
from pipeline.exact import Odds, exact_odds
from pipeline.games import banque
from pipeline.games.banque_counts import rule_set_value as banque_value_document
from pipeline.games.pairs import strategy_pair
from pipeline.games.solve import commission_of, equilibrium_document, equilibrium_strategies, solve_rules
from pipeline.games.strategies import load_strategy, write_strategies
from pipeline.games.value import INFINITE, pair_document, pair_value, shoe_of
from pipeline.user_files import output_file, output_folder, read_text
from pipeline.marts import board, shell
from pipeline.marts.bounds import ENVIRONMENT, Bounds
from pipeline.marts.engines import Engine, build_marts, outcomes_table, road_cells
from pipeline.marts.inputs import EVERY_MART, ROAD_CELLS_SHOES, ROAD_STATS_SHOES, load_runs
from pipeline.marts.publish import check_warehouse_target, drop_marts, publish_warehouse, write_marts
from pipeline.marts.warehouse import open_warehouse
from pipeline.jobs import already_committed, run_job
from pipeline.repair import repair_data_tables, repair_logs, verify_store
from pipeline.rule_sets import DEFAULT_RULES, load_rule_set
from pipeline.render import TextTable, show
from pipeline.runs import RUN_TABLES, RunRecord, check_run_id, read_run, read_runs
from pipeline.schemas import contract
from pipeline.simulate import job
from pipeline.simulate import banque as banque_job
from pipeline.simulate.banque import TABLE as BANQUE_TABLE
from pipeline.simulate.banque import BanquePlan, BanqueRun
from pipeline.spark import spark_session
from pipeline.storage import MIN_RETENTION_HOURS, Store

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    # Click's plain help: flags read as flags (rich panels give them a <bool> type) and option names
    # wrap rather than being cut short on a narrow terminal.
    rich_markup_mode=None,
    help="Baccarat analytics pipeline: exact odds, Spark simulation, marts and reports.",
)

OutOption = Annotated[Store, typer.Option(
    parser=Store.parse, metavar="PATH|URI",
    help="Where the tables live: a local folder, or s3://BUCKET/PREFIX (also gs://, az://, abfss://).")]
WarehouseOption = Annotated[Path | None, typer.Option(
    help="The DuckDB warehouse file; default OUT/warehouse.duckdb for a local OUT, else ./warehouse.duckdb.")]
DEFAULT_OUT = Store.parse("data")

RulesOption = Annotated[
    str, typer.Option("--rules", help="A rule set in conf/rules by name, or the path of a YAML file.")
]


def odds_document(odds: Odds, decks: int) -> dict:
    return {
        "rules": odds.rules,
        "decks": decks,
        "total_combinations": odds.total_combinations,
        "outcomes": {
            name: {"combinations": ways, "probability": float(odds.probability(name))}
            for name, ways in odds.outcomes.items()
        },
        "bets": {
            kind: {"ev": float(bet.ev), "house_edge_pct": float(bet.house_edge_pct), "sd": bet.sd}
            for kind, bet in odds.bets.items()
        },
    }


def _odds_tables(odds: Odds, decks: int) -> list[TextTable]:
    outcomes = TextTable(f"{odds.rules}, {decks_text(decks)}: {odds.total_combinations:,} six-card deals",
                         ("outcome", "combinations", "probability"), left=frozenset({"outcome"}))
    for name, ways in odds.outcomes.items():
        outcomes.add(name, f"{ways:,}", f"{float(odds.probability(name)):.6f}")
    bets = TextTable("bets, per unit staked", ("bet", "EV", "house edge %", "SD"), left=frozenset({"bet"}))
    for kind, bet in odds.bets.items():
        bets.add(kind, f"{float(bet.ev):+.6f}", f"{float(bet.house_edge_pct):.4f}", f"{bet.sd:.4f}")
    return [outcomes, bets]


def _decks(text: str) -> int | str:
    """--decks: a count of decks, or `infinite` (cards dealt with replacement) for games with options."""
    if text == INFINITE:
        return INFINITE
    if not text.isdigit() or not MIN_DECKS <= int(text) <= MAX_DECKS:
        raise typer.BadParameter(f"{text!r} is not {MIN_DECKS} to {MAX_DECKS} decks or {INFINITE!r}")
    return int(text)


DecksOption = Annotated[int | None, typer.Option(  # an int, or INFINITE from the parser (typer takes no unions)
    parser=_decks, metavar="N|infinite",
    help="Override the rule set's number of decks (1 to 8); `infinite` deals with replacement (games with options).")]


@app.command()
def odds(
    rules: RulesOption = DEFAULT_RULES,
    decks: DecksOption = None,
    player_strategy: Annotated[str | None, typer.Option(
        help="Games with options: the Player's strategy, in conf/strategies by name or a YAML file.")] = None,
    banker_strategy: Annotated[str | None, typer.Option(help="Games with options: the Banker's strategy.")] = None,
    banker_policy: Annotated[str | None, typer.Option(
        help=f"Baccarat banque: the Banker's policy, in conf/banque by name or a YAML file (default "
             f"{banque.DEFAULT_POLICY}); --player-strategy then takes NAME for both hands or NAME1,NAME2.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
) -> None:
    """Exact odds of every outcome and bet, by counting card combinations from a full shoe; in a game
    with options (chemin de fer), the exact value of a strategy pair; in baccarat banque, of a policy profile."""
    rule_set = load_rule_set(rules)
    if rule_set.two_hands is not None:
        _banque_odds(rule_set, decks, player_strategy, banker_strategy, banker_policy, as_json)
        return
    if banker_policy is not None:
        raise BaccaratError(f"--banker-policy is for baccarat banque (--rules banque), not rule set {rule_set.name!r}")
    if rule_set.has_options:
        _strategy_pair_odds(rule_set, decks, player_strategy, banker_strategy, as_json)
        return
    if player_strategy is not None or banker_strategy is not None:
        raise BaccaratError(f"rule set {rule_set.name!r} fixes every drawing decision: "
                            "--player-strategy and --banker-strategy are for games with options (chemin_de_fer)")
    if decks == INFINITE:
        raise BaccaratError(f"--decks {INFINITE} is for games with options; exact odds count a shoe of "
                            f"{MIN_DECKS} to {MAX_DECKS} decks")
    rule_set = rule_set.with_decks(decks)
    result = exact_odds(rule_set)
    warn_player_edges(result)
    if as_json:
        print(json.dumps(odds_document(result, rule_set.decks)))
        return
    show(*_odds_tables(result, rule_set.decks))


def _strategy_pair_odds(rule_set, decks, player_strategy: str | None, banker_strategy: str | None,
                        as_json: bool) -> None:
    if player_strategy is None or banker_strategy is None:
        raise BaccaratError(f"rule set {rule_set.name!r} leaves drawing decisions to the players: give "
                            "--player-strategy NAME and --banker-strategy NAME (see conf/strategies)")
    rule_set, decks = shoe_of(rule_set, decks)
    player, banker = load_strategy(player_strategy), load_strategy(banker_strategy)
    value = pair_value(rule_set, decks, player, banker)
    document = pair_document(rule_set.name, decks, player.name, banker.name, value)
    if as_json:
        print(json.dumps(document))
        return
    table = TextTable(f"{rule_set.name}, {_shoe_text(decks)}: Player {player.name} v Banker {banker.name}",
                      ("", "exact", "≈"), left=frozenset({""}))
    for side in ("player", "banker"):
        table.add(f"{side} wins", document["probabilities"][side], f"{document['probabilities_float'][side]:.6f}")
    for side in ("player", "banker"):
        table.add(f"{side} gain per unit", document["value"][side], f"{document['value_float'][side]:+.6f}")
    show(table)
    print(f"commission {float(rule_set.commission):.0%} of the Banker's wins; a tie pushes")


def _no_banque_banker_strategy(banker_strategy: str | None) -> None:
    if banker_strategy is not None:
        raise BaccaratError("the banque Banker plays a policy for both hands: give --banker-policy NAME (conf/banque), "
                            "not --banker-strategy")


def _banque_odds(rule_set, decks, player_strategy: str | None, banker_strategy: str | None,
                 banker_policy: str | None, as_json: bool) -> None:
    _no_banque_banker_strategy(banker_strategy)
    document = banque_value_document(rule_set, decks, banker_policy, player_strategy)
    if as_json:
        print(json.dumps(document))
        return
    table = TextTable(f"{rule_set.name}, {_shoe_text(document['decks'])}, stake share {document['stake_share']}: "
                      f"Banker {document['banker_policy']} v {' and '.join(document['player_strategies'])}",
                      ("", "exact", "≈"), left=frozenset({""}))
    for hand in ("hand1", "hand2"):
        for side in ("player", "banker"):
            table.add(f"{hand}: {side} wins", document["probabilities"][hand][side],
                      f"{document['probabilities_float'][hand][side]:.6f}")
    for who in ("banker", "hand1", "hand2"):
        per = "of both stakes" if who == "banker" else "staked"
        table.add(f"{who} gain per unit {per}", document["value"][who], f"{document['value_float'][who]:+.6f}")
    show(table)
    print(f"commission {float(rule_set.commission):.0%} of the Banker's wins; a tie pushes")


def _shoe_text(decks: int | str) -> str:
    return "infinite deck (with replacement)" if decks == INFINITE else decks_text(decks)


class BankerSees(str, Enum):
    total = "total"
    cards = "cards"


@app.command()
def solve(
    rules: RulesOption = "chemin_de_fer",
    decks: DecksOption = None,
    banker_sees: Annotated[BankerSees, typer.Option(
        help="What the Banker knows when he chooses: his total, or his two cards.")] = BankerSees.total,
    commission: Annotated[str | None, typer.Option(
        help="The house's share of a Banker win, 0 to 0.1; default the rule set's. 0 makes the game zero-sum.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
    strategies_folder: Annotated[str | None, typer.Option(
        "--write-strategies", metavar="FOLDER",
        help="Also write both sides' equilibrium strategies there, as strategy files.")] = None,
) -> None:
    """An equilibrium of chemin de fer, exactly: minimax without commission, Nash with one (and whether it
    is the only one)."""
    if strategies_folder is not None:
        strategies_folder = output_folder(strategies_folder, "--write-strategies")
    rule_set, decks = shoe_of(load_rule_set(rules), decks)
    commission = rule_set.commission if commission is None else commission_of(commission)
    equilibrium = solve_rules(rule_set, decks, banker_sees.value, commission)
    document = equilibrium_document(rule_set.name, decks, banker_sees.value, commission, equilibrium)
    if strategies_folder is not None:
        strategies = equilibrium_strategies(rule_set, decks, banker_sees.value, commission, equilibrium)
        for path, written in write_strategies(strategies, strategies_folder):
            print(f"{'wrote' if written else 'already there:'} {path}", file=sys.stderr)
    if as_json:
        print(json.dumps(document))
        return
    _print_equilibrium(document)


def _print_equilibrium(document: dict) -> None:
    kind = "minimax (zero-sum)" if document["commission_float"] == 0 else "Nash equilibrium (bimatrix)"
    print(f"{document['rules']}, {_shoe_text(document['decks'])}, Banker sees his {document['banker_sees']}, "
          f"commission {document['commission_float']:.2%}: {kind}, "
          f"{'unique' if document['unique'] else 'not unique'}")
    print(f"Player draws at 5 with probability {document['player_draw_at_5']} "
          f"(≈ {document['player_draw_at_5_float']:.6f})")
    for side in ("player", "banker"):
        print(f"{side} gain per unit: {document['value'][side]} (≈ {document['value_float'][side]:+.6f})")
    columns = ("Banker", "Player's third card", "draws with probability", "≈")
    table = TextTable("the Banker's play where it departs from punto banco or mixes", columns, left=frozenset(columns))
    for cell in document["banker"]:
        hand = f"{cell['cards'][0]},{cell['cards'][1]} ({cell['total']})" if cell["cards"] else str(cell["total"])
        third = "stood" if cell["player_third"] is None else str(cell["player_third"])
        table.add(hand, third, cell["draw"], f"{cell['draw_float']:.6f}")
    show(table)


def warn_player_edges(odds: Odds) -> None:
    """A payout that gives the player the edge is allowed (a study may want it), but never silently."""
    for kind, bet in odds.bets.items():
        if bet.ev > 0:
            print(f"warning: {kind} has a positive expected value for the player ({float(bet.ev):+.2%} per unit) "
                  f"under rule set {odds.rules!r}: check its payout", file=sys.stderr)


@app.callback()
def _commands() -> None:
    """Baccarat analytics pipeline: exact odds, Spark simulation, marts and reports."""


class Reporter:
    """Progress for people: a live bar on a terminal, a plain log line every few seconds otherwise."""

    def __init__(self, what: str, total: int, live: bool):
        self.what, self.total, self.live = what, total, live
        self.started = self.last_line = time.monotonic()
        self.bar, self.finished = None, False
        if live:
            from rich.progress import (
                BarColumn,
                Progress,
                TextColumn,
                TimeRemainingColumn,
            )

            self.bar = Progress(TextColumn("{task.description}"), BarColumn(),
                                TextColumn("{task.completed:,}/{task.total:,} shoes {task.fields[speed]}"),
                                TimeRemainingColumn())
            self.task = self.bar.add_task(what, total=total, speed="")
            self.bar.start()

    def __call__(self, shoes: int, rounds: int) -> None:
        elapsed = max(time.monotonic() - self.started, 1e-9)
        speed = _rate(rounds / elapsed)
        if self.bar:
            self.bar.update(self.task, completed=shoes, speed=speed)
        elif not self.finished and (time.monotonic() - self.last_line >= 5 or shoes == self.total):
            self.last_line = time.monotonic()
            self.finished = shoes == self.total
            left = f"about {(self.total - shoes) * elapsed / shoes:.0f} s left" if shoes else "starting"
            print(f"{self.what}: {shoes:,}/{self.total:,} shoes, {speed}, {left}", flush=True)

    def close(self) -> None:
        if self.bar:
            self.bar.stop()


def _rate(rounds_per_second: float) -> str:
    """A speed readable at any size: 0.00M rounds/s says nothing."""
    if rounds_per_second >= 1e5:
        return f"{rounds_per_second / 1e6:.2f}M rounds/s"
    return f"{rounds_per_second:,.0f} rounds/s"


def leaves_no_empty_folder(command: Callable) -> Callable:
    """The command's local OUT, when the command created it (Store.check_writable does) and failed
    before writing anything into it, goes again, with the parent folders it created."""

    @functools.wraps(command)
    def guarded(*args, out: Store = DEFAULT_OUT, **kwargs):
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


@app.command()
@leaves_no_empty_folder
def simulate(
    shoes: Annotated[int, typer.Option(min=1, max=job.MAX_SHOES, help="How many shoes to deal (at most 10**10).")],
    seed: Annotated[int, typer.Option(min=0, max=job.MAX_SEED, help="Run seed, 0 to 2**64-1.")],
    rules: RulesOption = DEFAULT_RULES,
    run_id: Annotated[str | None, typer.Option(help="Default: RULES-sSEED-nSHOES.")] = None,
    out: OutOption = DEFAULT_OUT,
    master: Annotated[str | None, typer.Option(help="Spark master URL; default local[*].")] = None,
    partitions: Annotated[int | None, typer.Option(
        min=1, max=job.MAX_PARTITIONS, help="Tasks, and files per table (at most 1,000,000).")] = None,
    overwrite: Annotated[bool, typer.Option(help="Replace a run id that exists with other parameters.")] = False,
    player_strategy: Annotated[str | None, typer.Option(
        help="Games with options: the Player's strategy, in conf/strategies by name or a YAML file; "
             "default the equilibrium of the rule set's shoe, the Banker seeing his cards. Baccarat banque: "
             "NAME for both hands or NAME1,NAME2.")] = None,
    banker_strategy: Annotated[str | None, typer.Option(
        help="Games with options: the Banker's strategy; default that equilibrium's.")] = None,
    banker_policy: Annotated[str | None, typer.Option(
        help=f"Baccarat banque: the Banker's policy, in conf/banque (default {banque.DEFAULT_POLICY}).")] = None,
    decks: Annotated[int | None, typer.Option(
        parser=_decks, metavar="N|infinite",
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
    strategies = strategy_pair(rule_set, player_strategy, banker_strategy)
    if strategies is None:
        warn_player_edges(exact_odds(rule_set))
    else:
        print(f"{rule_set.name}: the Player plays {strategies.player.name}, the Banker {strategies.banker.name}")
    run_id = check_run_id(f"{rule_set.name}-s{seed}-n{shoes}" if run_id is None else run_id)
    plan = job.Plan(run_id, rule_set, seed, shoes, out.check_writable(), partitions, strategies=strategies)
    for line in repair_data_tables(out) if overwrite else ():
        print(line)
    replacing = overwrite and read_run(out, run_id) is not None
    if already_committed(plan, overwrite):
        print(f"run {run_id!r} is already committed with these parameters in {out}: nothing to do")
        return run_id
    started = time.monotonic()
    spark = spark_session(master, f"baccarat simulate {run_id}")
    if plan.partitions is None:
        plan = replace(plan, partitions=job.default_partitions(shoes, spark.sparkContext.defaultParallelism))
    reporter = Reporter(f"simulate {run_id}", shoes, live=sys.stdout.isatty())
    try:
        record = run_job(spark, plan, reporter)
    finally:
        reporter.close()
    _summary(record, out, time.monotonic() - started)
    if replacing:
        _forget_replaced_marts(out, run_id)
    return run_id


def _simulate_banque(rule_set, shoes: int, seed: int, run_id: str | None, out: Store, overwrite: bool,
                     master: str | None, partitions: int | None, player_strategy: str | None,
                     banker_strategy: str | None, banker_policy: str | None, decks) -> str:
    _no_banque_banker_strategy(banker_strategy)
    run = BanqueRun.of(run_id, rule_set, decks, banque.load_policy(banker_policy or banque.DEFAULT_POLICY),
                       banque.player_strategies(rule_set, player_strategy), seed, shoes)
    check_run_id(run.run_id)
    plan = BanquePlan(run, out.check_writable(), partitions)
    for line in repair_data_tables(out) if overwrite else ():
        print(line)
    if already_committed(plan, overwrite):
        print(f"run {run.run_id!r} is already committed with these parameters in {out.location(BANQUE_TABLE)}: "
              "nothing to do")
        return run.run_id
    started = time.monotonic()
    spark = spark_session(master, f"baccarat simulate {run.run_id}")
    if plan.partitions is None:
        plan = replace(plan, partitions=banque_job.default_partitions(shoes, spark.sparkContext.defaultParallelism))
    reporter = Reporter(f"simulate {run.run_id}", shoes, live=sys.stdout.isatty())
    try:
        result = run_job(spark, plan, reporter)
    finally:
        reporter.close()
    print(f"committed banque run {run.run_id!r}: {run.shoes:,} shoes, {result.rounds:,} rounds in "
          f"{time.monotonic() - started:.1f} s; {out.location(BANQUE_TABLE)} "
          f"version {result.versions[BANQUE_TABLE]}")
    return run.run_id


@app.command()
def composition(
    run_id: Annotated[str, typer.Option(help="The committed run whose rounds are analysed.")],
    out: OutOption = DEFAULT_OUT,
    shoes: Annotated[int | None, typer.Option(
        min=1, max=job.MAX_SHOES, help="Only the run's first N shoes; default every shoe.")] = None,
    counts: Annotated[str | None, typer.Option(
        metavar="NAME,...", help="Count systems: names in conf/counts or paths of .yaml files; default every "
        "shipped one whose bets the run's rule set offers.")] = None,
    master: Annotated[str | None, typer.Option(help="Spark master URL; default local[*].")] = None,
    partitions: Annotated[int | None, typer.Option(
        min=1, max=job.MAX_PARTITIONS, help="Tasks, and files (at most 1,000,000).")] = None,
) -> None:
    """Exact EV of every bet before every round of a committed run, from the cards a player has not
    seen, with the running and true counts of count systems: the Delta table OUT/round_ev."""
    plan = composition_job.plan_for(out.check_readable(), check_run_id(run_id), shoes, counts, partitions)
    out.check_writable()
    for line in repair_logs(out, [composition_job.ROUND_EV]):
        print(f"{line}: compute the round_ev rows of the other runs it held again")
    if already_committed(plan, overwrite=False):
        print(f"round_ev of run {run_id!r} is already committed for these shoes and count systems in {out}: "
              "nothing to do")
        return
    started = time.monotonic()
    spark = spark_session(master, f"baccarat composition {run_id}")
    if plan.partitions is None:
        plan = replace(plan, partitions=composition_job.default_partitions(
            plan.shoes, spark.sparkContext.defaultParallelism))
    reporter = Reporter(f"composition {run_id}", plan.shoes, live=sys.stdout.isatty())
    try:
        result = run_job(spark, plan, reporter)
    finally:
        reporter.close()
    seconds = time.monotonic() - started
    print(f"committed round_ev of run {run_id!r}: {_count(result['shoes'], 'shoe')}, "
          f"{_count(result['rounds'], 'round')}, {_count(len(result['files']), 'file')} in {seconds:.1f} s ({_rate(result['rounds'] / seconds)}); version "
          f"{result['version']} of {out.location(composition_job.ROUND_EV)}; count systems: "
          f"{', '.join(result['counts']) or 'none'}")


def _count(number: int, thing: str) -> str:
    return f"{number:,} {thing}" + ("" if number == 1 else "s")


def _forget_replaced_marts(out: Store, run_id: str) -> None:
    """The marts and round_ev rows of a replaced run describe the old one: they go, and a local warehouse
    is published again, so that neither shows the old run's figures nor names its files."""
    drop_marts(out, run_id)
    print(f"the marts of the replaced run {run_id!r} are removed: run `baccarat marts --run-id {run_id}`")
    if composition_job.drop_round_ev(out, run_id):
        print(f"its exact odds before each round are removed: run `baccarat composition --run-id {run_id}`")
    if out.is_local and out.warehouse_path().is_file():
        warehouse, left_out = publish_warehouse(out, out.warehouse_path())
        for line in left_out:
            print(f"warning: {line}", file=sys.stderr)
        print(f"published {warehouse} again")


EngineOption = Annotated[Engine, typer.Option(help="Query engine.")]


@app.command()
def marts(
    out: OutOption = DEFAULT_OUT,
    run_id: Annotated[list[str] | None, typer.Option("--run-id", help="Runs to build (repeatable); default all committed.")] = None,
    engine: EngineOption = Engine.duckdb,
    warehouse: WarehouseOption = None,
    road_cells_shoes: Annotated[int, typer.Option(min=0, help="Shoes per run drawn cell by cell in road_cells.")] = ROAD_CELLS_SHOES,
    road_stats_shoes: Annotated[int, typer.Option(
        min=0, help="Shoes per run behind road_colours, road_column_lengths, road_patterns (0: all).")] = ROAD_STATS_SHOES,
) -> None:
    """Build the dashboard tables of committed runs (Delta tables OUT/marts/*) and publish the warehouse."""
    runs = load_runs(out, run_id)  # every run is verified before anything is written
    out.check_writable()
    warehouse = check_warehouse_target(warehouse or out.warehouse_path())
    for line in repair_logs(out, [contract(name).table for name in EVERY_MART]):
        print(f"{line}: the marts of every run are built again by `baccarat marts` without --run-id")
    for run in runs:
        started = time.monotonic()
        write_marts(run, build_marts(engine, run, road_cells_shoes, road_stats_shoes))
        print(f"marts of run {run.run_id!r} ({run.record.rounds:,} rounds) built with {engine.value} "
              f"in {time.monotonic() - started:.1f} s", flush=True)
    warehouse, left_out = publish_warehouse(out, warehouse, frozenset(run.run_id for run in runs))
    for line in left_out:
        print(f"warning: {line}", file=sys.stderr)
    views = ", views of their rounds and shoes" if out.is_local else " (their rounds and shoes stay in OUT)"
    print(f"published {warehouse}: marts of the committed runs{views}")


ROADS_INPUT_BYTES = 1 << 20  # about 10,000 shoes of results: a minute or two of work


@app.command()
def roads(
    outcomes: Annotated[str | None, typer.Option(help="A shoe's results in order, e.g. BPPTB.")] = None,
    input_file: Annotated[str | None, typer.Option(
        "--input", metavar="PATH", help='JSON lines {"id": ..., "outcomes": "BPT..."}; at most 1 MiB.')] = None,
    engine: EngineOption = Engine.duckdb,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of drawing the roads.")] = False,
) -> None:
    """The five roads of a sequence of results, through the same road code the marts use."""
    if (outcomes is None) == (input_file is None):
        raise BaccaratError("give exactly one of --outcomes and --input")
    if outcomes is not None:
        cells = road_cells(engine, outcomes_table([outcomes]))
        if as_json:
            print(json.dumps(board.roads_document(cells)))
        else:
            Console().print(board.board(cells))
        return
    ids, sequences = _read_sequences(input_file)
    cells = road_cells(engine, outcomes_table(sequences))
    for line_id, document in zip(ids, board.roads_documents(cells, len(ids))):
        print(json.dumps({"id": line_id, **document}))


def _read_sequences(path: str) -> tuple[list, list[str]]:
    lines = read_text(path, "--input", ROADS_INPUT_BYTES, "JSON lines file").splitlines()
    ids, sequences = [], []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            ids.append(record["id"])
            sequences.append(record["outcomes"])
        except (json.JSONDecodeError, KeyError, TypeError):
            raise BaccaratError(f'{path}, line {number}: expected {{"id": ..., "outcomes": "BPT..."}}') from None
        if not isinstance(sequences[-1], str):
            raise BaccaratError(f"{path}, line {number}: outcomes must be a string")
    return ids, sequences


@app.command()
def report(
    out: OutOption = DEFAULT_OUT,
    run_id: Annotated[str | None, typer.Option(help="Default: the newest run in the warehouse.")] = None,
    shoe_id: Annotated[int | None, typer.Option(min=0, help="The shoe whose roads are drawn.")] = None,
    warehouse: WarehouseOption = None,
    page: Annotated[Path | None, typer.Option(
        help="Where the page goes; default OUT/report/index.html for a local OUT, else ./report/index.html.")] = None,
) -> Path:
    """Write a self-contained dashboard of one run, an HTML page that opens with no network."""
    from pipeline.report import build_report

    page = build_report(out, run_id, shoe_id, warehouse, page and output_file(page, "--page"))
    print(f"report: {page}")
    return page


@app.command()
def run(
    shoes: Annotated[int, typer.Option(min=1, max=job.MAX_SHOES, help="How many shoes to deal (at most 10**10).")] = 20_000,
    rules: RulesOption = DEFAULT_RULES,
    seed: Annotated[int, typer.Option(min=0, max=job.MAX_SEED, help="Run seed, 0 to 2**64-1.")] = 1,
    out: OutOption = DEFAULT_OUT,
    master: Annotated[str | None, typer.Option(help="Spark master URL; default local[*].")] = None,
    warehouse: WarehouseOption = None,
) -> None:
    """The whole pipeline: simulate, marts, warehouse and report; then where everything is."""
    if load_rule_set(rules).two_hands is not None:
        raise BaccaratError("the marts and the report read one-hand rounds (OUT/rounds): deal baccarat banque with "
                            "`baccarat simulate --rules banque` (OUT/banque_rounds)")
    warehouse = warehouse or out.warehouse_path()
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


@app.command(context_settings={"ignore_unknown_options": True})  # "-- a comment\nSELECT 1" is a query
def sql(
    query: Annotated[str | None, typer.Argument(help="A query; without one, an interactive prompt.")] = None,
    out: OutOption = DEFAULT_OUT,
    warehouse: WarehouseOption = None,
    timeout: Annotated[float | None, typer.Option(help=f"Seconds a statement may run [env {ENVIRONMENT['timeout']}; "
                                                       "default 60].")] = None,
    memory_limit: Annotated[str | None, typer.Option(help=f"DuckDB's memory, e.g. 1GB [env "
                                                          f"{ENVIRONMENT['memory_limit']}; default 2GB].")] = None,
    threads: Annotated[int | None, typer.Option(help=f"Threads [env {ENVIRONMENT['threads']}; default up to 4].")] = None,
    temp_directory: Annotated[Path | None, typer.Option(help=f"Where a query spills, outside the data [env "
                                                             f"{ENVIRONMENT['temp_directory']}].")] = None,
    max_temp_directory_size: Annotated[str | None, typer.Option(help=f"The spill's cap [env "
                                                                     f"{ENVIRONMENT['max_temp_directory_size']}; "
                                                                     "default 10GB].")] = None,
) -> int:
    """Query the warehouse (read-only, bounded): one query, or a prompt reading statements ending in ';'."""
    bounds = Bounds.given(timeout=timeout, memory_limit=memory_limit, threads=threads, temp_directory=temp_directory,
                          max_temp_directory_size=max_temp_directory_size)
    with open_warehouse(warehouse or out.warehouse_path(), bounds) as con:
        if query is None:
            return shell.prompt(con, bounds)
        try:
            shell.run_one(con, bounds, query)
        except KeyboardInterrupt:
            raise typer.Abort() from None
        return 0


@app.command()
def docs(
    path: Annotated[Path, typer.Option(help="Where the data dictionary goes.")] = Path("docs/tables.md"),
    check: Annotated[bool, typer.Option(help="Only check that the file is up to date.")] = False,
) -> None:
    """Generate the data dictionary (docs/tables.md) from the contracts in schemas/; --check: it is current,
    and every link and `baccarat` command in README.md and docs/ resolves."""
    from pipeline.dictionary import write_dictionary

    if check:
        _check_documents(path)
        return
    try:
        written = write_dictionary(output_file(path, "--path"))
    except OSError as error:
        raise BaccaratError(f"cannot write {path}: {error.strerror or error}") from None
    print(f"{path} {'written' if written else 'already up to date'}")


def _check_documents(dictionary: Path) -> None:
    """Print each problem of the documents as a one-line error and exit 2, or say they are current."""
    from pipeline.doc_check import document_problems

    problems = document_problems(dictionary, typer.main.get_command(app).commands)
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    if problems:
        raise typer.Exit(2)
    print(f"{dictionary} is up to date")
    print("every link in README.md and docs/ resolves, and every baccarat command they name exists")


def _summary(record: RunRecord, out: Store, seconds: float) -> None:
    rounds = record.rounds
    shares = ", ".join(f"{k} {v / rounds:.4%}" for k, v in record.outcomes.items())
    print(f"committed run {record.run_id!r}: {record.shoes:,} shoes, {rounds:,} rounds ({shares})")
    print(f"{len(record.files)} files in {seconds:.1f} s ({_rate(rounds / seconds)}); "
          f"rounds version {record.versions['rounds']}, shoes version {record.versions['shoes']}, "
          f"row in {out.location('runs')}")


@app.command()
def runs(
    out: OutOption = DEFAULT_OUT,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON lines instead of a table.")] = False,
) -> None:
    """The committed runs, with the Delta versions of their commits and their times."""
    records = read_runs(out.check_readable())
    if as_json:
        for record in records:
            print(json.dumps(record.summary()))
        return
    versions = "versions (rounds, shoes or banque_rounds)"
    table = TextTable(f"committed runs in {out}", ("run id", "rules", "seed", "shoes", "rounds", versions, "started",
                      "ended"), left=frozenset({"run id", "rules", versions, "started", "ended"}))
    for r in records:
        table.add(r.run_id, r.rules, str(r.seed), f"{r.shoes:,}", f"{r.rounds:,}",
                  ", ".join(map(str, r.versions.values())), r.started_at.isoformat(), r.ended_at.isoformat())
    show(table)


@app.command()
def verify(
    out: OutOption = DEFAULT_OUT,
    run_id: Annotated[list[str] | None, typer.Option(
        "--run-id", help="Runs to verify (repeatable); default every committed run.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document instead of lines.")] = False,
) -> int:
    """Check every table's log and every committed run's files against the sizes and SHA-256 its runs row
    records and the data contracts: a line per problem with its repair (docs/repair.md), exit 1 if any."""
    problems, runs_checked = verify_store(out.check_readable(), [check_run_id(r) for r in run_id or []])
    if as_json:
        print(json.dumps({"out": out.uri, "runs": runs_checked, "problems": problems}))
    elif problems:
        print("\n".join(problems))
    else:
        print(f"verified {_count(runs_checked, 'run')} in {out}: every log, file and contract checks out")
    return 1 if problems else 0


@app.command()
def vacuum(
    out: OutOption = DEFAULT_OUT,
    retention_hours: Annotated[int, typer.Option(
        min=MIN_RETENTION_HOURS,
        help="Only files older than this go: a job still running has written nothing older.")] = 168,
    dry_run: Annotated[bool, typer.Option(help="List what would go, remove nothing.")] = False,
) -> None:
    """Remove files no committed version needs (attempts that never committed, replaced runs and
    marts) and checkpoint the tables' logs."""
    records = read_runs(out.check_readable())
    keep = {table: [r.versions[table] for r in records if table in r.versions] for table in RUN_TABLES}
    for table in out.tables():
        removed = out.vacuum(table, retention_hours, dry_run, keep.get(table, []))
        verb = "would remove" if dry_run else "removed"
        print(f"{out.location(table)}: {verb} {len(removed)} files")


@app.command()
def risk(
    bet: Annotated[str, typer.Option(help="The bet: player, banker, tie or any bet of the rule set.")],
    bankroll: Annotated[str, typer.Option(help="The bankroll at the start, in units (the stake is 1 unit).")],
    goal: Annotated[str, typer.Option(
        help="The win goal, in units: the session ends as soon as the bankroll is at least bankroll + goal "
             "(a win may pass it: a Banker win at 0.95 by less than one unit).")],
    system: Annotated[str, typer.Option(help="flat (1 unit a round) or martingale (1, 2, 4, ... units until a "
                                             "win; a stake the table maximum or the bankroll cannot take is a "
                                             "losing cycle, and the next stake is 1 unit).")] = "flat",
    table_max: Annotated[str | None, typer.Option(help="Martingale: the table maximum, in units.")] = None,
    rules: RulesOption = DEFAULT_RULES,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """The exact risk of ruin of flat or Martingale betting, rounds dealt independently with the rule set's
    exact odds: the chance to reach the goal before ruin (the bankroll cannot cover the next stake of
    1 unit), the expected rounds, stakes and net, and a Martingale's losing cycle; each value with a proven
    bound on its distance from the exact rational (docs/betting-systems.md)."""
    question = risk_model.RiskQuestion(bet, system, risk_model.units(bankroll, "--bankroll"),
                                       risk_model.units(goal, "--goal"),
                                       None if table_max is None else risk_model.units(table_max, "--table-max"))
    risk_model.check_question(question)
    answer = risk_model.risk(question, risk_model.net_distribution(load_rule_set(rules), bet))
    document = risk_model.risk_document(answer)
    if as_json:
        print(json.dumps(document))
        return
    table = TextTable(f"{system} on {bet}, bankroll {document['bankroll']}, goal +{document['goal']} units",
                      ("quantity", "value", "error bound"), left=frozenset({"quantity"}))
    for key in ("goal_reached", "ruined", "expected_rounds", "expected_wagered", "expected_net"):
        table.add(key.replace("_", " "), document[key]["value"], document[key]["error_bound"])
    for key, value in document.get("cycle", {}).items():
        table.add(f"first cycle: {key.replace('_', ' ')}", value, "exact")
    show(table)


INTERRUPTED = 130


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; bad input of any kind ends in one line on stderr and exit status 2."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        argv = ["--help"]
    try:
        result = typer.main.get_command(app).main(args=argv, prog_name="baccarat", standalone_mode=False)
    except typer.Exit as done:
        return done.exit_code
    except (typer.Abort, KeyboardInterrupt):
        print("error: interrupted", file=sys.stderr)
        return INTERRUPTED
    except typer.TyperException as error:  # bad arguments, as click words them
        print(f"error: {error.format_message()}", file=sys.stderr)
        return 2
    except PipelineError as error:  # bad input: 2; a failure of the world (a full disk, a store, ...): 1
        print(f"error: {error}", file=sys.stderr)
        return error.exit_status
    if result == INTERRUPTED:  # typer's answer to a Ctrl-C it caught, which no command returns itself
        print("error: interrupted", file=sys.stderr)
    return result if isinstance(result, int) else 0


def console() -> None:
    """Console-script entry point: the process ends with main()'s status once its output is flushed,
    without the interpreter's finalisation, where native threads (Arrow's, DuckDB's) still releasing
    Python objects can abort the process (SIGABRT, exit 134) after the command has succeeded."""
    status = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:  # the reader stopped reading (`| head`): nothing left to say
            pass
        except OSError:
            status = status or 1
    os._exit(status)


if __name__ == "__main__":
    console()
