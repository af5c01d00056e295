"""The analytics over committed runs: marts (and the warehouse), roads, report and sql."""

import json
import shlex
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from pipeline.cli.app import (DEFAULT_OUT, LaterOutOption, OutOption, WarehouseOption, parse_master,
                              parse_store, path_option)
from pipeline.cores import usable_cores
from pipeline.errors import BaccaratError
from pipeline.marts.bounds import ENVIRONMENT, Bounds
from pipeline.marts.choices import MAX_RANGES, ROAD_CELLS_SHOES, ROAD_STATS_SHOES, Engine
from pipeline.user_files import output_file, read_text

if TYPE_CHECKING:
    from pipeline.marts.inputs import RunInput
    from pipeline.marts.partials import RangeRunner
    from pipeline.storage import Store

EngineOption = Annotated[Engine, typer.Option(help="Query engine.")]


def marts(
    out: OutOption = DEFAULT_OUT,
    run_id: Annotated[list[str] | None, typer.Option("--run-id", help="Runs to build (repeatable); default all committed.")] = None,
    engine: EngineOption = Engine.duckdb,
    warehouse: WarehouseOption = None,
    road_cells_shoes: Annotated[int, typer.Option(min=0, help="Shoes per run drawn cell by cell in road_cells.")] = ROAD_CELLS_SHOES,
    road_stats_shoes: Annotated[int, typer.Option(
        min=0, help="Shoes per run behind road_colours, road_column_lengths, road_patterns (0: all).")] = ROAD_STATS_SHOES,
    master: Annotated[str | None, typer.Option(parser=parse_master, metavar="URL", help=(
        "Spark master URL whose tasks compute the shoe ranges' partials; without it, in this process."))] = None,
    ranges: Annotated[int | None, typer.Option(min=1, max=MAX_RANGES, help=(
        "Shoe ranges per run whose partials are computed apart; default one per 200,000 shoes (per 10,000 "
        "for a run with round_ev rows), and with --master at least one per core."))] = None,
) -> None:
    """Build the dashboard tables of committed runs (Delta tables OUT/marts/*) and publish the warehouse;
    with --master, the rounds are read and aggregated by Spark tasks, a shoe range each."""
    from pipeline.at_once import alongside
    from pipeline.marts.cluster import default_ranges
    from pipeline.marts.engines import build_marts
    from pipeline.marts.publish import publish_warehouse, write_marts
    from pipeline.repair import unlogged_added_rows
    from pipeline.tasks import shoe_ranges

    with out.keeping_tables_open():
        # Spark's driver starts (on this thread, which alone takes signals) while the runs are checked
        (runs, warehouse), (run_ranges, parallelism) = alongside(
            lambda: _checked_for_marts(out, run_id, warehouse, tasks_hash=_on_spark(master)),
            lambda: _range_runner(master, out))
        for run in runs:
            started = time.monotonic()
            count = ranges or default_ranges(run.record.shoes, parallelism, run.round_ev_shoes())
            stale = write_marts(run, build_marts(engine, run, road_cells_shoes, road_stats_shoes, count, run_ranges))
            on = f" on {len(shoe_ranges(run.record.shoes, count)):,} Spark tasks" if _on_spark(master) else ""
            print(f"marts of run {run.run_id!r} ({run.record.rounds:,} rounds) built with {engine.value}{on} "
                  f"in {time.monotonic() - started:.1f} s", flush=True)
            if stale:
                print(f"warning: run {run.run_id!r}: rows its marts were built from were replaced meanwhile (by "
                      f"simulate --overwrite, composition or backtest), so {len(stale)} of them, such as {stale[0]}, "
                      f"are left out: {shlex.join(['baccarat', 'marts', '--run-id', run.run_id, '--out', out.uri])} "
                      "builds them", file=sys.stderr)
        warehouse, left_out = publish_warehouse(out, warehouse, frozenset(run.run_id for run in runs))
        unlogged = unlogged_added_rows(out)  # round_ev and sessions as the runs' check opened them
    for line in left_out + unlogged:
        print(f"warning: {line}", file=sys.stderr)
    views = ", views of their rounds and shoes" if out.is_local else " (their rounds and shoes stay in OUT)"
    left = f" but {len(left_out):,} left out (the warnings above)" if left_out else ""
    print(f"published {warehouse}: marts of the committed runs{left}{views}")


def _checked_for_marts(out: "Store", run_ids: list[str] | None, warehouse: Path | None,
                       tasks_hash: bool) -> tuple[list["RunInput"], Path]:
    """The runs, every one verified before anything is written (by Spark's tasks, which hash the files they
    read, when `tasks_hash`), and the warehouse's path, once OUT is known writable and the marts' damaged
    logs are repaired."""
    from pipeline.at_once import alongside
    from pipeline.marts.inputs import EVERY_MART, load_runs
    from pipeline.marts.publish import check_warehouse_target
    from pipeline.repair import damaged_logs, set_logs_aside
    from pipeline.schemas import contract

    # OUT checked first, on an object store the command's first request, bounded (FIRST_ANSWER_SECONDS):
    # alongside the runs' check it waited for the marts' listing, which is not a first request (`marts`
    # against an endpoint that never answers took 72 s to say it did not answer within 10 s)
    out.check_readable()
    # the marts' logs are read (and kept open for their commits) while the runs are checked, but any
    # damaged one is set aside only once nothing refuses the command
    runs, damaged = alongside(lambda: load_runs(out, run_ids, tasks_hash),
                              lambda: damaged_logs(out, [contract(name).table for name in EVERY_MART]))
    out.check_writable()
    warehouse = check_warehouse_target(warehouse or out.warehouse_path())
    for line in set_logs_aside(out, damaged):
        print(f"{line}: the marts of every run are built again by `baccarat marts` without --run-id")
    return runs, warehouse


def _on_spark(master: str | None) -> bool:
    """Whether Spark tasks build the shoe ranges' partials."""
    from pipeline.spark import under_spark_submit

    return master is not None or under_spark_submit()


def _range_runner(master: str | None, out: "Store") -> tuple["RangeRunner", int]:
    """How the shoe ranges' partials run, and on how many cores: in this process (a range per core from a
    local folder, two at a time from an object store), or as Spark tasks (with the cluster's cores)."""
    from pipeline.marts.partials import on_every_core, two_at_once
    from pipeline.spark import spark_context

    if not _on_spark(master):
        return (on_every_core, usable_cores()) if out.is_local else (two_at_once, 1)
    from pipeline.marts.cluster import spark_ranges

    context = spark_context(master, "baccarat marts")
    return spark_ranges(context, out), context.defaultParallelism


ROADS_INPUT_BYTES = 1 << 20  # about 10,000 shoes of results: a minute or two of work


def roads(
    outcomes: Annotated[str | None, typer.Option(help="A shoe's results in order, e.g. BPPTB.")] = None,
    input_file: Annotated[str | None, typer.Option(
        "--input", metavar="PATH", help='JSON lines {"id": ..., "outcomes": "BPT..."}; at most 1 MiB.')] = None,
    engine: EngineOption = Engine.duckdb,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of drawing the roads.")] = False,
) -> None:
    """The five roads of a sequence of results, through the same road code the marts use."""
    from rich.console import Console

    from pipeline.marts import board
    from pipeline.marts.engines import outcomes_table, road_cells

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


def report(
    out: OutOption = DEFAULT_OUT,
    run_id: Annotated[str | None, typer.Option(help="Default: the newest run in the warehouse.")] = None,
    shoe_id: Annotated[int | None, typer.Option(min=0, help="The shoe whose roads are drawn.")] = None,
    warehouse: WarehouseOption = None,
    page: Annotated[Path | None, path_option(
        help="Where the page goes; default OUT/report/index.html for a local OUT, else ./report/index.html.")] = None,
) -> Path:
    """Write a self-contained dashboard of one run, an HTML page that opens with no network."""
    from pipeline.report import build_report
    from pipeline.report.page import TITLE

    mark = f"<title>{TITLE}: ".encode()
    target = page and output_file(page, "--page", mark)  # a local path: judged before OUT's store is asked
    page = build_report(out.check_readable(), run_id, shoe_id, warehouse, target)
    print(f"report: {page}")
    return page


STDIN = "-"  # as the query: statements from stdin, as without one (cat, psql -f -)


def sql(
    query: Annotated[str | None, typer.Argument(help=(
        "A query; without one (or '-'), statements from stdin: a prompt at a terminal, else a script."))] = None,
    out: LaterOutOption = DEFAULT_OUT,
    warehouse: WarehouseOption = None,
    timeout: Annotated[float | None, typer.Option(help=f"Seconds a statement may run [env {ENVIRONMENT['timeout']}; "
                                                       "default 60].")] = None,
    memory_limit: Annotated[str | None, typer.Option(help=f"DuckDB's memory, e.g. 1GB [env "
                                                          f"{ENVIRONMENT['memory_limit']}; default 2GB].")] = None,
    threads: Annotated[int | None, typer.Option(help=f"Threads [env {ENVIRONMENT['threads']}; default up to 4].")] = None,
    temp_directory: Annotated[Path | None, path_option(help=f"Where a query spills, outside the data [env "
                                                            f"{ENVIRONMENT['temp_directory']}].")] = None,
    max_temp_directory_size: Annotated[str | None, typer.Option(help=f"The spill's cap [env "
                                                                     f"{ENVIRONMENT['max_temp_directory_size']}; "
                                                                     "default 10GB].")] = None,
) -> int:
    """Query the warehouse (read-only, bounded): one query, or a prompt reading statements ending in ';'."""
    from pipeline.marts import shell
    from pipeline.marts.warehouse import open_warehouse

    bounds = Bounds.given(timeout=timeout, memory_limit=memory_limit, threads=threads, temp_directory=temp_directory,
                          max_temp_directory_size=max_temp_directory_size)
    # --out only names the default warehouse: with --warehouse it is not read (a ./data refused here, in a
    # folder whose path deltalake cannot read, refused the query)
    with open_warehouse(warehouse or parse_store(out).warehouse_path(), bounds) as con, shell.memory_capped(bounds):
        if query in (None, STDIN):
            return shell.prompt(con, bounds)
        try:
            shell.run_one(con, bounds, query)
        except KeyboardInterrupt:
            raise typer.Abort() from None
        return 0
