"""Verifying what a store holds (every table's log, every committed run's files against its runs row
and the contracts) and repairing it: a damaged log is set aside from its first damaged entry, and the
runs whose recorded files still verify are committed again (docs/repair.md)."""

import shlex
import time
from dataclasses import asdict

import pyarrow.parquet as pq

from pipeline.at_once import each_at_once
from pipeline.bets import BET_KINDS
from pipeline.cards import MAX_RUNNING_COUNT, MAX_TAG, MAX_TRUE_COUNT
from pipeline.errors import BaccaratError
from pipeline.orphans import commit_row, newest_row, orphan_problem, orphan_runs
from pipeline.runs import (RUN_TABLES, RUNS, DamagedRun, RunRecord, contract_problem, failing_checksums, missized_files,
                           read_runs, repair_command, run_problems, uncommitted, written_run)
from pipeline.schemas import contract
from pipeline.storage import DamagedLog, StorageError, Store, data_file
from pipeline.tasks import OPTIONS_GIVEN

ROUND_EV = contract("round_ev").table
SESSIONS = contract("sessions").table
ADDED_TABLES = (ROUND_EV, SESSIONS)  # the tables a job adds to a committed run, by its run id
COUNT_BOUNDS = {"running_count_": MAX_RUNNING_COUNT, "true_count_": MAX_TRUE_COUNT}  # round_ev's count columns


def added_repair(store: Store, table: str, run_id: str) -> str:
    """The command that writes a run's rows of a table a job adds to it again: the job with the options its
    commit recorded it was given (OPTIONS_GIVEN), which writes the committed rows back; without a record (a
    commit by a version of the pipeline before, or a log that cannot be read), the job to run with the
    options it was made with."""
    command = _job_command(store, table, run_id)
    if (given := _options_given(store, table, run_id)) is None:
        return _unrecorded_repair(table, command)
    return shlex.join([*command, *given])


def _job_command(store: Store, table: str, run_id: str) -> list[str]:
    """The words of the job that writes a run's rows of `table` (round_ev or sessions), before its options."""
    return ["baccarat", "composition" if table == ROUND_EV else "backtest", "--run-id", run_id, "--out", store.uri]


def _options_given(store: Store, table: str, run_id: str) -> list[str] | None:
    """The options the commit of the run's rows of `table` recorded its command was given, None when it
    recorded none or its log cannot be read (verify names that log in a line of its own)."""
    try:
        given = store.commit_record(table, run_id, OPTIONS_GIVEN)
    except StorageError:
        return None
    return given if isinstance(given, list) and all(isinstance(word, str) for word in given) else None


def _unrecorded_repair(table: str, command: list[str]) -> str:
    """The repair command of rows whose commit recorded no options: the options left for the user to give."""
    if table == ROUND_EV:
        return f"{shlex.join(command)} (with the --shoes and --counts it was run with)"
    return f"{shlex.join(command)} --systems ... (with the systems and session options it was run with)"


def unlogged_added_rows(store: Store, tables: tuple[str, ...] = ADDED_TABLES) -> list[str]:
    """A line for each table a job adds to runs (round_ev, sessions) that holds data files of runs its log
    holds no rows of, and no commit took out, so that no reader sees them (`marts` builds no mart of them):
    its log or their commits removed or left out of a copy, or the job writing them at work or ended before
    its commit (files alone cannot tell which), with the command that writes them again."""
    lines = []
    for table in tables:
        try:
            runs, logged = _unlogged_runs(store, table)
        except StorageError:
            continue  # a damaged log or an unreadable table: a problem line of its own
        if runs:
            named = f"run {runs[0]!r}" if len(runs) == 1 else f"{len(runs):,} runs, such as {runs[0]!r},"
            lost = "its log holds none of their rows" if logged else "no log"
            lines.append(f"{store.location(table)} holds data files of {named} but {lost}, so no reader sees their "
                         f"rows (its log{' or their commits' if logged else ''} removed or left out of a copy, or the "
                         f"job writing them not committed yet, or ended before its commit): for each run, "
                         f"{added_repair(store, table, runs[0])} writes them again; `baccarat vacuum` removes them")
    return lines


def _unlogged_runs(store: Store, table: str) -> tuple[list[str], bool]:
    """The runs with data files in `table` that its log neither holds rows of nor took out, and whether it has
    a log."""
    held, written = store.run_ids(table), store.written_files(table)
    removed = store.removed_files(table) if set(written) - held else set()
    runs = sorted(run for run, files in written.items()
                  if run not in held and any(f["path"] not in removed for f in files))
    return runs, bool(held) or store.delta_table(table) is not None


def damaged_past(store: Store, table: str) -> DamagedLog | None:
    """The damaged entry of a round_ev or sessions log that deltalake reads past: a commit file left empty
    (a writer killed, a disk that filled, a copy truncated), which it takes for a commit of no actions, so
    that the rows the commit added are gone without a word (no runs row lists them, as it lists rounds and
    shoes files); None when the log is whole, or for another table, whose lost rows a check names."""
    if table not in ADDED_TABLES or (damaged := store.damaged_log_entry(table)) is None:
        return None
    return DamagedLog(table, *damaged, store.uri)


def refuse_damaged_past(store: Store) -> None:
    """DamagedLog for a round_ev or sessions log with a damaged entry deltalake reads past (damaged_past):
    the marts would leave out the rows it lost without a word, and a checkpoint would sum it up for good."""
    for table in ADDED_TABLES:
        if damaged := damaged_past(store, table):
            raise damaged


def _table_repair(store: Store, table: str) -> str:
    """The command that repairs a table's damaged log (docs/repair.md)."""
    out = shlex.quote(store.uri)
    if table in ADDED_TABLES:
        return f"{_unrecorded_repair(table, _job_command(store, table, 'RUN'))}, for each run it held"
    if table.startswith("marts/"):
        return f"baccarat marts --out {out}"
    if run := next((run for run in _recorded_runs(store) if table == RUNS or table in run.versions), None):
        return repair_command(store, run)  # any run of the table repairs its log first
    return f"baccarat simulate ... --overwrite --out {out} with the parameters of any run in it"


def _recorded_runs(store: Store) -> list[RunRecord]:
    """The committed runs, or when the runs table's log cannot be read, those of its row files."""
    try:
        return read_runs(store)
    except StorageError:
        newest = [newest_row(store, run_id, files) for run_id, files in store.written_files(RUNS).items()]
        return [found[0] for found in newest if found]


def _table_problems(store: Store, table: str, run_ids: list[str] | None) -> list[str]:
    """A table's damaged log, or the committed files of a table no runs row lists (the marts) that are
    missing, of another size than the log records, or failing the SHA-256 their commit recorded."""
    try:
        held = store.run_ids(table)
        if damaged := damaged_past(store, table):
            raise damaged
        if table in RUN_TABLES or table in ADDED_TABLES:
            return []  # their files are checked run by run
        files = store.committed_files(table, sorted(held & set(run_ids) if run_ids else held), checksums=True)
    except StorageError as error:
        return [f"{error.problem}; repair: {_table_repair(store, table)}"]
    missized = missized_files(store, files)
    sized_wrong = {f["path"] for f, _ in missized}
    failing = failing_checksums(store, [f for f in files if f["path"] not in sized_wrong])
    return [f"{store.location(f['path'])}: {'missing' if size is None else f'{size:,} bytes'}, its log records "
            f"{f['size']:,} bytes; repair: {_table_repair(store, table)}" for f, size in missized] + [
        f"{store.location(f['path'])}: fails the SHA-256 its commit records; repair: {_table_repair(store, table)}"
        for f in failing]


def added_problems(store: Store, run: RunRecord, table: str, files: list[dict], hashed: bool = True) -> list[str]:
    """What is wrong with a run's committed `files` of a table a job adds to it (round_ev, sessions;
    Store.partition_files, with the checksums their commit recorded), a line each with its repair: missing,
    of another size than the table's log records, failing its recorded SHA-256 (when `hashed`; a file
    committed before checksums were recorded has none), or breaking the contract."""
    missized = missized_files(store, files)
    problems = [f"data file {'missing' if size is None else f'is {size:,} bytes'}, its log records {f['size']:,}: "
                f"{store.location(f['path'])}" for f, size in missized]
    damaged = {f["path"] for f, _ in missized}
    failing = failing_checksums(store, [f for f in files if f["path"] not in damaged]) if hashed else []
    problems += [f"data file fails its checksum: {store.location(f['path'])}" for f in failing]
    damaged |= {f["path"] for f in failing}
    sound = [f for f in files if f["path"] not in damaged]
    counts = count_past_bounds if table == ROUND_EV else None
    footers = store.parquet_footers([f["path"] for f in sound])
    problems += [why for f, footer in zip(sound, footers) if (why := contract_problem(
        store.location(f["path"]), footer, table, run.bets, rows=f["rows"], footer_problem=counts))]
    repair = added_repair(store, table, run.run_id) if problems else ""
    return [f"run {run.run_id!r}: {why}; repair: {repair}" for why in problems]


def count_past_bounds(footer: pq.FileMetaData) -> str | None:
    """A running or true count in a round_ev file past the bounds count systems have (pipeline/cards.py),
    by its Parquet footer's statistics: a file committed before the bounds, which the marts' count levels
    cannot hold; or None."""
    for group in range(footer.num_row_groups):
        for index in range(footer.num_columns):
            chunk = footer.row_group(group).column(index)
            bound = next((b for prefix, b in COUNT_BOUNDS.items() if chunk.path_in_schema.startswith(prefix)), None)
            stats = chunk.statistics
            if bound is not None and stats is not None and stats.has_min_max and max(-stats.min, stats.max) > bound:
                return (f"column {chunk.path_in_schema!r} reaches {max(-stats.min, stats.max):g}, "
                        f"past the bound {bound:,} (written before count systems' tags were kept within ±{MAX_TAG}, "
                        "the marts cannot hold it)")
    return None


def _added_problems(store: Store, run: RunRecord, reported: set[str]) -> list[str]:
    """The problems of a run's files in the tables jobs add to it; a table whose log cannot be read is a
    line of its own, unless in `reported` (the damaged logs verify found, which it adds to)."""
    problems = []
    for table in ADDED_TABLES:
        try:
            files = store.partition_files(table, run.run_id, checksums=True)
        except StorageError as error:
            if error.problem not in reported:  # a commit a reader does not need may still fail the checksums' read
                reported.add(error.problem)
                problems.append(f"{error.problem}; repair: {_table_repair(store, table)}")
            continue
        problems += added_problems(store, run, table, files)
    return problems


def verify_store(store: Store, run_ids: list[str] | None = None) -> tuple[list[str], int]:
    """Every problem of the store's tables and of its committed runs (or those of `run_ids`), a line
    each, with the command that repairs it (none when everything verifies); and how many runs it checked.
    A damaged log is one line, not one more for each run in the table; a run the runs table lost (a data
    table holds its rows, or its row file is there) is one line too."""
    problems = [line for table in store.table_names() for line in _table_problems(store, table, run_ids)]
    try:
        runs = read_runs(store)
    except DamagedRun as error:  # a malformed runs row
        return [*problems, str(error)], 0
    except StorageError:
        return problems, 0  # the runs table's damaged log is a line already
    orphans = [o for o in orphan_runs(store, {run.run_id for run in runs}) if not run_ids or o.run_id in run_ids]
    problems += [orphan_problem(store, orphan) for orphan in orphans]
    if unknown := sorted(set(run_ids or ()) - {run.run_id for run in runs} - {o.run_id for o in orphans}):
        raise BaccaratError(f"unknown run id {unknown[0]!r}: no row in {store.location(RUNS)}")
    damaged_logs = {line.partition("; repair: ")[0] for line in problems}
    checked = [run for run in runs if not run_ids or run.run_id in run_ids]
    for run in checked:
        problems += [f"{line}; repair: {repair_command(store, run)}" for line in run_problems(store, run)
                     if line.removeprefix(f"run {run.run_id!r}: ") not in damaged_logs]
        problems += _added_problems(store, run, damaged_logs)
    return problems, len(checked)


def _unreadable(store: Store, table: str) -> bool:
    """Whether deltalake cannot read the table's log, or reads past a damaged entry of it (damaged_past)."""
    return _damaged_log(store, table) is not None or damaged_past(store, table) is not None


def _damaged_log(store: Store, table: str) -> DamagedLog | None:
    """Why deltalake cannot read the table's log, None when it can."""
    try:
        store.delta_table(table)
        return None
    except DamagedLog as damaged:
        return damaged


def damaged_run_logs(store: Store, records: list[RunRecord]) -> list[str]:
    """A line for each table the runs' rows are in (rounds, shoes, banque_rounds) whose log deltalake cannot
    read, naming verify, which gives its repair (`marts` fails on it until then): a reader of the runs table
    and the marts (`runs`) shows no damage of theirs otherwise. Each log is opened, no data file read."""
    tables = store.possible_tables([table for table in RUN_TABLES if any(table in r.versions for r in records)])
    return [f"{damaged} (`baccarat marts` fails on it until then)"
            for damaged in each_at_once(lambda table: _damaged_log(store, table), tables) if damaged]


def damaged_logs(store: Store, tables: list[str]) -> list[str]:
    """Those of `tables` whose log deltalake cannot read, or reads past a damaged entry of (damaged_past);
    nothing written: see set_logs_aside."""
    tables = store.possible_tables(tables)
    unreadable = each_at_once(lambda table: _unreadable(store, table), tables)
    return [table for table, damaged in zip(tables, unreadable) if damaged]


def set_logs_aside(store: Store, tables: list[str]) -> list[str]:
    """Set aside the damaged part of the logs of `tables`; a line for each."""
    # a log another command set aside meanwhile is whole: nothing is said of it
    return [f"the damaged log of {store.location(table)} is set aside in {aside}"
            for table in tables if (aside := store.set_log_aside(table))]


def repair_logs(store: Store, tables: list[str]) -> list[str]:
    """Set aside the damaged part of the logs of `tables` that cannot be read; a line for each."""
    return set_logs_aside(store, damaged_logs(store, tables))


def repair_added_log(store: Store, table: str) -> list[str]:
    """Set aside the damaged part of a round_ev or sessions log: its line, then one naming the runs whose rows
    that took out, if any, with the command that writes them again."""
    aside = repair_logs(store, [table])
    return aside + [f"note: {line}" for line in unlogged_added_rows(store, (table,))] if aside else []


def _drop_rows_of_lost_files(store: Store) -> list[str]:
    """Drop from the runs table each run's row whose file is missing or of another size than its log
    records (deleted by hand, lost with a disk): no reader can read the runs table past it. Its run is
    then one the runs table lost (pipeline/orphans.py): its row committed again from another row file of
    it, or the run dealt again."""
    held = sorted(store.run_ids(RUNS))
    files = store.committed_files(RUNS, held)  # one read of the log and one size check for every run
    lost = [f for f, _ in missized_files(store, files)]
    done = []
    for run_id in held:
        own = [f for f in files if f["path"].startswith(data_file(RUNS, run_id, ""))]
        if gone := [f for f in own if f in lost]:
            store.commit_partition(RUNS, run_id, [f for f in own if f not in gone], contract(RUNS).table_schema(()),
                                   (f"baccarat-repair:{run_id}", time.time_ns() // 1_000_000))
            done.append(f"run {run_id!r}: its row file {store.location(gone[0]['path'])} is missing or damaged: "
                        f"its row is dropped from {store.location(RUNS)}")
    return done


def _restore_runs_rows(store: Store) -> list[str]:
    """Commit again, for each run with no committed row, its newest row file whose listed rounds and
    shoes files all verify (their size, SHA-256 and contract): rows a set-aside log had committed, or a
    runs log deleted (verify names such a run: pipeline/orphans.py)."""
    committed, done = store.run_ids(RUNS), []
    for run_id, files in store.written_files(RUNS).items():
        if run_id in committed:
            continue
        for file in reversed(files):  # the newest first: names carry the attempt's start
            run = written_run(store, run_id, file["path"])
            if run is not None and not run_problems(store, run, committed=False):
                done.append(commit_row(store, run, file))
                break
    return done


def repair_data_tables(store: Store) -> list[str]:
    """Set aside the damaged part of the logs of rounds, shoes, banque_rounds and runs, drop the runs rows
    whose row file is lost, commit again the runs rows lost (in a set-aside or deleted log: their row
    files are left), then every run's files of
    each table its row lists (rounds and shoes, or banque_rounds), where the table no longer holds them and
    they all verify (their size and SHA-256); returns a line for each thing done."""
    done = repair_logs(store, [*RUN_TABLES, RUNS]) + _drop_rows_of_lost_files(store) + _restore_runs_rows(store)
    for run in read_runs(store):
        for table in run.versions:
            if uncommitted(store, run, table) and not run_problems(store, run.only(table), checksums=True,
                                                                   committed=False):
                store.commit_partition(table, run.run_id, [asdict(f) for f in run.files_of(table)],
                                       contract(table).table_schema(tuple(BET_KINDS)), run.transaction())
                done.append(f"run {run.run_id!r}: its verified {table} files are committed again")
    return done
