"""Runs the runs table lost (its log deleted, or the row's commit lost): a run id with no committed row in
`runs` whose rows a data table (rounds, shoes, banque_rounds) holds committed, or whose row file is still
in runs/. No reader sees such a run, and what repairs it is `simulate --overwrite` with its parameters: its
row is committed again from its row file (repair.repair_data_tables), or when none is left, the run is
dealt again (docs/repair.md)."""

import shlex
from dataclasses import dataclass

from pipeline.errors import BaccaratError
from pipeline.rule_sets import RuleSet
from pipeline.runs import (BANQUE_ROUNDS, RUN_TABLES, RUNS, DamagedRun, RunRecord, read_committed_run, read_run,
                           repair_command, written_run)
from pipeline.schemas import contract
from pipeline.storage import StorageError, Store
from pipeline.tasks import part_key, part_shoes


@dataclass(frozen=True)
class OrphanRun:
    """A run id the runs table has no row of: the data tables holding committed rows of it, and the
    record in its newest readable row file (None when none is left) with that file (its path and size)."""

    run_id: str
    tables: tuple[str, ...]
    row: RunRecord | None = None
    row_file: dict | None = None


def newest_row(store: Store, run_id: str, files: list[dict]) -> tuple[RunRecord, dict] | None:
    """The record in the newest readable of a run's row files (Store.written_files(RUNS)), and that file."""
    for file in reversed(files):  # names carry the attempt's start
        if (run := written_run(store, run_id, file["path"])) is not None:
            return run, file
    return None


def commit_row(store: Store, run: RunRecord, row_file: dict) -> str:
    """Commit a lost run's row again from its row file (one of Store.written_files(RUNS)); the line saying so."""
    store.commit_partition(RUNS, run.run_id, [row_file | {"rows": 1}], contract(RUNS).table_schema(()),
                           run.transaction())
    return f"run {run.run_id!r}: its row is committed again to {store.location(RUNS)}"


def _held(store: Store) -> dict[str, list[str]]:
    """The data tables holding committed rows of each run id; a table whose log cannot be read is left
    out (verify reports it on a line of its own)."""
    held: dict[str, list[str]] = {}
    for table in RUN_TABLES:
        try:
            run_ids = store.run_ids(table)
        except StorageError:
            continue
        for run_id in run_ids:
            held.setdefault(run_id, []).append(table)
    return held


def orphan_runs(store: Store, committed: set[str]) -> list[OrphanRun]:
    """The runs not in `committed` (the run ids with a runs row) that a data table holds rows of, or that
    have a readable row file, by run id."""
    held, written = _held(store), store.written_files(RUNS)
    orphans = []
    for run_id in sorted((held.keys() | written.keys()) - committed):
        row = newest_row(store, run_id, written.get(run_id, []))
        if held.get(run_id) or row:
            orphans.append(OrphanRun(run_id, tuple(held.get(run_id, ())), *(row or ())))
    return orphans


def orphan_run(store: Store, run_id: str) -> OrphanRun | None:
    """The run `run_id`, which the caller found no runs row of, when a data table holds rows of it, else None."""
    tables = tuple(table for table in RUN_TABLES if run_id in store.run_ids(table))
    if not tables:
        return None
    return OrphanRun(run_id, tables, *(newest_row(store, run_id, store.written_files(RUNS).get(run_id, [])) or ()))


def lost_files(store: Store, orphan: OrphanRun) -> list[dict]:
    """A lost run's committed files in the first table that holds its rows."""
    return store.partition_files(orphan.tables[0], orphan.run_id)


def dealt_with(files: list[dict]) -> list[str]:
    """The content keys in the names of a lost run's committed `files` ("none" for a name without one)."""
    return sorted({part_key(f["path"]) or "none" for f in files})


def orphan_problem(store: Store, orphan: OrphanRun, key: str | None = None) -> str:
    """verify's line for a run the runs table lost, ending in what repairs it; given the content key of a
    plain simulate's parameters (`key`), whether they are those its files were dealt with."""
    count = len(orphan.tables)
    holds = f"the {' and '.join(orphan.tables)} table{'s hold' if count > 1 else ' holds'} its rows" if count else ""
    runs_table = ("the runs table has no row of it" if store.delta_table(RUNS) is not None
                  else f"the runs table is gone (no log in {store.location(RUNS)})")
    if orphan.row is not None:
        found = f"its row file {store.location(orphan.row_file['path'])} is there"
        return (f"run {orphan.run_id!r}: {', and '.join(filter(None, (holds, found)))}, but {runs_table}; "
                f"repair: {repair_command(store, orphan.row)}")
    files = lost_files(store, orphan)
    keys = dealt_with(files)
    problem = f"run {orphan.run_id!r}: {holds}, but {runs_table} and no row file of it is left; repair: "
    these = ", not these" if key is not None else ""
    return (f"{problem}deal it again with the {_parameters(orphan)} it was made with{these} (a plain simulate with "
            f"them says whether they are: its files' names carry their key, {', '.join(keys)}): "
            f"{_deal_again(store, orphan, files)}")


def _deal_again(store: Store, orphan: OrphanRun, files: list[dict]) -> str:
    """The command that deals a run with no row again, but for its rules and seed, which only its row held:
    its shoes and partitions are in the names of its committed `files` of one table."""
    shoes = max((shoes[1] for f in files if (shoes := part_shoes(f["path"]))), default=0)
    return shlex.join(["baccarat", "simulate", "--rules", "RULES", "--seed", "SEED", "--shoes", str(shoes),
                       "--partitions", str(len(files)), "--run-id", orphan.run_id, "--out", store.uri, "--overwrite"])


def _parameters(orphan: OrphanRun) -> str:
    """The parameters a run's row held that its files' names do not tell."""
    if BANQUE_ROUNDS in orphan.tables:
        return "rules, seed, --decks, --banker-policy and --player-strategy"
    return "rules and seed (and strategies, in a game with options)"


def refuse_orphans(store: Store, orphans: list[OrphanRun], note: str = "") -> None:
    """DamagedRun naming the first of `orphans` (orphan_runs) and its repair, with `note` and how many more
    there are; nothing when there are none."""
    if orphans:
        more = f" ({len(orphans) - 1:,} more such runs: `baccarat verify` names them)" if len(orphans) > 1 else ""
        raise DamagedRun(f"{orphan_problem(store, orphans[0])}{note}{more}")


def readable_run(store: Store, run_id: str) -> tuple[RunRecord, RuleSet]:
    """read_committed_run, but a run the runs table lost is DamagedRun naming its repair (as marts --run-id
    refuses it), not an unknown run id: composition and backtest of a run just dealt are not bad input."""
    try:
        return read_committed_run(store, run_id)
    except BaccaratError:
        if read_run(store, run_id) is None and (orphan := orphan_run(store, run_id)):
            refuse_orphans(store, [orphan])
        raise
