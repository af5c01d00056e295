"""The store's own commands: runs, verify and vacuum; and docs, the data dictionary and the check of
every document."""

import json
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from pipeline.cli.app import DEFAULT_OUT, OutOption, app, count, path_option
from pipeline.errors import BaccaratError, cannot_write
from pipeline.render import TextTable, show
from pipeline.user_files import output_file

if TYPE_CHECKING:  # the commands load the store (pyarrow, Delta Lake) when they run
    from pipeline.runs import RunRecord
    from pipeline.storage import Store


def _no_table(out: "Store", doing: str) -> BaccaratError:
    """The refusal of a command given an --out that holds no table (a typo, the wrong folder), which would
    otherwise succeed with nothing to do, every time."""
    return BaccaratError(f"no table in {out}: nothing to {doing} (is --out the folder or URI of the tables?)")


def runs(
    out: OutOption = DEFAULT_OUT,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON lines instead of a table.")] = False,
) -> None:
    """The committed runs, with the Delta versions of their commits and their times, and whether their
    marts are built: a run without is not in the warehouse, its rounds and shoes views included. A run the
    runs table lost (docs/repair.md) is a warning naming its repair, or the error when no run is committed;
    a damaged log of the tables the runs' rows are in, a warning naming verify."""
    from pipeline.orphans import orphan_problem, orphan_runs, refuse_orphans
    from pipeline.repair import damaged_run_logs
    from pipeline.runs import read_runs

    with out.keeping_tables_open():  # the data tables' logs, read for the orphans, are read once
        records = read_runs(out.check_readable())
        orphans = orphan_runs(out, {r.run_id for r in records})
        refuse_orphans(out, [] if records else orphans)
        damaged = damaged_run_logs(out, records)
        _list_runs(out, records, as_json)
    for line in [orphan_problem(out, orphan) for orphan in orphans] + damaged:
        print(f"warning: {line}", file=sys.stderr)


def _list_runs(out: "Store", records: list["RunRecord"], as_json: bool) -> None:
    states, lines = _marts_states(out, records)
    if as_json:
        for record in records:
            built = {"built": True, "-": None}.get(states[record.run_id], False)
            print(json.dumps(record.summary() | {"marts": built}))
        return
    versions = "versions (rounds, shoes or banque_rounds)"
    table = TextTable(f"committed runs in {out}", ("run id", "rules", "seed", "shoes", "rounds", "marts", versions,
                      "started", "ended"), left=frozenset({"run id", "rules", "marts", versions, "started", "ended"}))
    for r in records:
        table.add(r.run_id, r.rules, str(r.seed), f"{r.shoes:,}", f"{r.rounds:,}", states[r.run_id],
                  ", ".join(map(str, r.versions.values())), r.started_at.isoformat(), r.ended_at.isoformat())
    show(table)
    for line in lines:
        print(line)


def _marts_states(out: "Store", records: list["RunRecord"]) -> tuple[dict[str, str], list[str]]:
    """Whether each run's marts are built: built, none, incomplete, or - for a banque run, which has none to
    build (they read one-hand rounds); and a line for each run whose marts are not all built, with what to do."""
    from pipeline.at_once import alongside
    from pipeline.marts.held import added_marts_to_build, lost_runs, runs_in_every_mart, runs_with_added_rows
    from pipeline.marts.inputs import MARTS

    every, added = (alongside(lambda: runs_in_every_mart(out), lambda: runs_with_added_rows(out)) if records
                    else ({}, {}))
    to_build = added_marts_to_build(added, every) if records else {}
    held = [every[name] for name in MARTS if every.get(name) is not None] or [set()]
    losing = {run_id for runs in (lost_runs(out, held=every) if records else {}).values() for run_id in runs}
    states, lost, unbuilt = {}, [], []
    for r in records:
        holding = [r.run_id in runs for runs in held]
        if "rounds" not in r.versions:
            states[r.run_id] = "-"
        elif not any(holding):
            states[r.run_id] = "none"
            unbuilt.append(f"run {r.run_id!r} has no marts (not built yet, or removed by `simulate --overwrite`): "
                           f"the warehouse leaves it out, its rounds and shoes too, until `baccarat marts "
                           f"{shlex.join(['--run-id', r.run_id, '--out', out.uri])}`")
        else:
            states[r.run_id] = "built" if r.run_id not in losing and r.run_id not in to_build else "incomplete"
            if r.run_id in losing:  # verify names a mart that lost the run's rows
                lost.append(f"run {r.run_id!r} has only some of its marts (a mart table's log or folder removed?): "
                            f"`baccarat verify --out {shlex.quote(out.uri)}` names them")
            for table, marts in to_build.get(r.run_id, {}).items():
                unbuilt.append(f"run {r.run_id!r} has {table} rows that none of their marts ({', '.join(marts)}) "
                               f"hold yet: `baccarat marts {shlex.join(['--run-id', r.run_id, '--out', out.uri])}` "
                               f"builds them")
    return states, sorted(lost) + unbuilt


def verify(
    out: OutOption = DEFAULT_OUT,
    run_id: Annotated[list[str] | None, typer.Option(
        "--run-id", help="Runs to verify (repeatable); default every committed run.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document instead of lines.")] = False,
) -> int:
    """Check every table's log and every committed run's files against the sizes and SHA-256 its runs row
    records and the data contracts: a line per problem with its repair (docs/repair.md), exit 1 if any."""
    from pipeline.marts.held import lost_mart_rows
    from pipeline.repair import unlogged_added_rows, verify_store
    from pipeline.runs import check_run_id

    run_ids = [check_run_id(r) for r in run_id or []]
    problems, runs_checked = verify_store(out.check_readable(), run_ids)
    problems += lost_mart_rows(out, run_ids)
    temporaries = out.temporaries()  # a first job killed before its commit left them and no table
    if not (problems or runs_checked or temporaries) and all(out.delta_table(t) is None for t in out.table_names()):
        raise _no_table(out, "verify")
    unlogged = unlogged_added_rows(out)
    if as_json:
        print(json.dumps({"out": out.uri, "runs": runs_checked, "problems": problems,
                          "temporaries": [str(path) for path in temporaries], "unlogged": unlogged}))
        return 1 if problems else 0
    if problems:
        print("\n".join(problems))
    else:
        print(f"verified {count(runs_checked, 'run')} in {out}: every log, file and contract checks out")
    for line in unlogged:
        print(f"note: {line}")
    if temporaries:
        print(_temporaries_note(out, temporaries))
    return 1 if problems else 0


def _temporaries_note(out: "Store", temporaries: dict[Path, int]) -> str:
    """The temporary files in OUT's run folders (with their sizes), which no table reads, and what removes them."""
    from pipeline.storage import STALE_AGE

    folders = ", ".join(sorted({str(path.parent) for path in temporaries}))
    return (f"note: {count(len(temporaries), 'temporary file')} ({sum(temporaries.values()):,} bytes), which no "
            f"table reads, in {folders}: an interrupted write's, unless a job is writing there now; "
            f"`baccarat vacuum --out {shlex.quote(out.uri)}` removes those no writer has touched for {STALE_AGE}")


def _a_retention_in_bounds(hours: int) -> int:
    from pipeline.storage import MAX_RETENTION_HOURS, MIN_RETENTION_HOURS

    if hours < MIN_RETENTION_HOURS:
        raise typer.BadParameter(f"{hours} is under {MIN_RETENTION_HOURS} hours: a running job's files could go")
    if hours > MAX_RETENTION_HOURS:
        raise typer.BadParameter(f"{hours} is over {MAX_RETENTION_HOURS:,} hours (use --dry-run to remove nothing)")
    return hours


def vacuum(
    out: OutOption = DEFAULT_OUT,
    retention_hours: Annotated[int, typer.Option(
        callback=_a_retention_in_bounds,
        help="Only files older than this go: a job still running has written nothing older.")] = 168,
    dry_run: Annotated[bool, typer.Option(help="List what would go, remove nothing.")] = False,
) -> None:
    """Remove files no committed version needs (attempts that never committed, replaced runs and
    marts) and checkpoint the tables' logs."""
    from pipeline.orphans import orphan_runs, refuse_orphans
    from pipeline.repair import refuse_damaged_past
    from pipeline.runs import RUN_TABLES, read_runs
    from pipeline.storage import STALE_AGE

    records = read_runs(out.check_readable() if dry_run else out.check_readable().check_writable())
    refuse_orphans(out, orphan_runs(out, {r.run_id for r in records}),
                   " (vacuum waits for the repair: it could remove a row file no table lists)")
    _refuse_lost_commits(out, records)
    refuse_damaged_past(out)  # its checkpoint would sum the damaged entry up, and verify could no longer name it
    keep = {table: [r.versions[table] for r in records if table in r.versions] for table in RUN_TABLES}
    tables, temporaries = out.tables(), out.temporaries()
    if not tables and not temporaries:  # a first job killed before its commit leaves them and no table
        raise _no_table(out, "vacuum")
    verb = "would remove" if dry_run else "removed"
    for table in tables:
        removed = out.vacuum(table, retention_hours, dry_run, keep.get(table, []))
        print(f"{out.location(table)}: {verb} {count(len(removed), 'file')}")
    if dead := out.remove_dead_temporaries(dry_run):
        print(f"{out}: {verb} {count(len(dead), 'temporary file')} of an interrupted write "
              f"(untouched for {STALE_AGE})")
    if fresh := len(temporaries) - len(dead):
        print(f"{out}: kept {count(fresh, 'temporary file')} touched in the last {STALE_AGE} (a job may be writing "
              f"there); vacuum removes them once untouched that long")


def _refuse_lost_commits(out: "Store", records: list["RunRecord"]) -> None:
    """DamagedRun naming the first run whose commit a data table's log no longer holds (the log ends before
    the version its row records), with verify's line and repair: vacuuming that table would remove the
    run's files, which the repair commits again."""
    from pipeline.runs import RUN_TABLES, DamagedRun, repair_command, uncommitted

    for table in RUN_TABLES:
        recorded = [r for r in records if table in r.versions]
        delta = out.delta_table(table) if recorded else None
        latest = delta.version() if delta is not None else -1
        if lost := next((r for r in recorded if r.versions[table] > latest), None):
            raise DamagedRun(f"run {lost.run_id!r}: {uncommitted(out, lost, table)}; repair: "
                             f"{repair_command(out, lost)} (vacuum waits for the repair: it would remove the "
                             "files the repair commits again)")


CLONE_DICTIONARY = Path("docs/tables.md")


def docs(
    path: Annotated[Path | None, path_option(
        help="Where the data dictionary goes (default docs/tables.md, run at a clone's root).")] = None,
    check: Annotated[bool, typer.Option(help="Only check that the file is up to date.")] = False,
) -> None:
    """Generate the data dictionary (docs/tables.md) from the contracts in schemas/; --check: it is current,
    and every link and `baccarat` command in README.md and docs/ resolves."""
    from pipeline.dictionary import TITLE, write_dictionary

    if path is None and not CLONE_DICTIONARY.parent.is_dir():
        raise BaccaratError(f"no {CLONE_DICTIONARY.parent}/ folder in {Path.cwd()}: `baccarat docs` works on a clone's "
                            f"{CLONE_DICTIONARY}, run at its root; give --path FILE to write the dictionary elsewhere")
    path = path or CLONE_DICTIONARY
    if check:
        _check_documents(path)
        return
    try:
        written = write_dictionary(output_file(path, "--path", f"# {TITLE}\n".encode()))
    except OSError as error:
        raise cannot_write(str(path), error) from None
    print(f"{path} {'written' if written else 'already up to date'}")


def _check_documents(dictionary: Path) -> None:
    """Print each problem of the documents as a one-line error and exit 2, or say they are current."""
    from pipeline.doc_check import document_problems, documents_checked

    problems = document_problems(dictionary, typer.main.get_command(app).commands)
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    if problems:
        raise typer.Exit(2)
    print(f"{dictionary} is up to date")
    print(f"every link in {documents_checked(dictionary)} resolves, and every baccarat command they name exists")
