"""The one shape of a Spark job that writes files (simulate, banque, composition, and every job to come):

    plan -> a Spark task per shoe range, each writing its files -> clean-up of dead attempts'
    temporaries -> every object checked against what its task recorded -> one commit per table
    -> the run's row in `runs` -> a failure of the world as one line (JobFailed).

A job supplies its plan (JobPlan: what it writes, where, over which ranges) and its task
(JobPlan.write_range); run_job does the rest, and already_committed decides whether it has anything to do.
"""

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

import pyarrow as pa

from pipeline import __version__
from pipeline.errors import BaccaratError, WorldFailure
from pipeline.orphans import commit_row, dealt_with, lost_files, orphan_problem, orphan_run
from pipeline.runs import (BANQUE_PARAMETERS, BANQUE_ROUNDS, DamagedRun, FileEntry, RunRecord, commit_run,
                           failing_checksums, missized_files, read_run, repair_command, run_problems)
from pipeline.spark import ended_with_its_workers
from pipeline.storage import PartitionTaken, StorageError, Store
from pipeline.tasks import KEY_LENGTH, content_key, part_key, run_ranges
from pipeline.termination import stops_held


def new_tag() -> str:
    """A new job's tag, part of its temporary files' names (a plan's `job`)."""
    return uuid.uuid4().hex[:KEY_LENGTH]


class JobFailed(WorldFailure):
    """A job's files could not be written, checked or committed (a task's or the commit's OSError, an
    object that is not what its task wrote): nothing was committed. The message is one line."""


@dataclass(frozen=True)
class Written:
    """What a job's tasks wrote and committed, for its plan's result()."""

    results: list[dict]  # each task's result, by first shoe
    files: list[dict]  # every file: table, path, rows, size, sha256, first_shoe, last_shoe
    versions: dict[str, int]  # each table's version holding the files
    started: datetime
    ended: datetime
    master: str  # the Spark master that ran the tasks


class JobPlan(Protocol):
    """What a job supplies (a plan class names JobPlan as its base, and keeps its defaults). Its task, write_range(first, last, report_batch), writes shoes [first,
    last) of each of `tables` as one file (see tasks.write_files) and returns a dict with first_shoe,
    last_shoe (the range, inclusive) and files (what write_files returned), and whatever else result()
    needs; it calls report_batch(shoes, rows) with its counts so far after each batch."""

    out: Store
    run_id: str
    job: str  # tags the job's temporary files
    tables: tuple[str, ...]  # the Delta tables it writes, in the order they are committed
    application: str  # its Delta application transactions are APPLICATION:RUN_ID
    in_runs: bool  # whether result() is a run's record, committed to `runs` last
    overwrite_needed: bool  # whether replacing other rows under its run id needs --overwrite

    @property
    def what(self) -> str: ...  # the job's subject in messages: "run 'x'"

    def parameters(self) -> dict: ...  # what decides the rows

    def ranges(self) -> list[tuple[int, int]]: ...

    def write_range(self, first: int, last: int, report_batch: Callable[[int, int], None]) -> dict: ...

    def table_schema(self, table: str) -> pa.Schema: ...

    def result(self, written: Written) -> Any: ...  # a RunRecord when in_runs

    def commit_metadata(self, table: str) -> dict:
        """What the commit of `table` records beside its files (Store.commit_partition's `metadata`): none."""
        return {}

    def settled(self, results: list[dict], rewrite: Callable[["JobPlan", list[tuple[int, int]]], list[dict]]) \
            -> list[dict]:
        """The tasks' results to commit: these. A plan whose tasks' results must be checked together
        returns them checked, after rewrite(plan, ranges) has run another plan's tasks over some ranges again."""
        return results


def run_record(plan, written: Written) -> RunRecord:
    """The record of a run a plan dealt (its row in `runs`): the plan's rule_set, seed, shoes and
    parameters, and what its tasks wrote, each task's result counting the outcomes it dealt."""
    outcomes = {key: sum(r["outcomes"][key] for r in written.results) for key in ("B", "P", "T")}
    parameters = plan.parameters()
    return RunRecord(
        run_id=plan.run_id, rules=plan.rule_set.name, rule_set=parameters["rules"], seed=plan.seed, shoes=plan.shoes,
        rounds=sum(f["rows"] for f in written.files if f["table"] == plan.tables[0]),
        banker_wins=outcomes["B"], player_wins=outcomes["P"], ties=outcomes["T"],
        partitions=len(written.results), software_version=__version__, spark_master=written.master,
        started_at=written.started, ended_at=written.ended, versions=written.versions,
        files=tuple(FileEntry(**entry) for entry in written.files), strategies=parameters.get("strategies"),
        banque={key: parameters[key] for key in BANQUE_PARAMETERS} if BANQUE_ROUNDS in written.versions else None)


def _committed_run(plan: JobPlan) -> RunRecord | None:
    """The runs row under the plan's run id, or None; a runs log that cannot be read is DamagedRun."""
    try:
        return read_run(plan.out, plan.run_id)
    except StorageError as error:
        raise DamagedRun(f"{error}; repair: the same command with --overwrite (docs/repair.md)") from None


def _row_restored(plan: JobPlan, report: Callable[[str], None]) -> bool:
    """Whether the plan's run, which the runs table has no row of, got its row back from its row file (the
    line saying so to `report`), as `simulate --overwrite` restores it: the data tables hold its rows dealt
    with the plan's parameters, and its newest row file records them and files that all verify (sizes,
    checksums, contracts, the tables holding them). With no such row file it is dealt again, row last, as a
    scheduler's retry of a job that died between its commits does. Rows dealt with other parameters are
    DamagedRun naming the repair."""
    key = content_key(plan.parameters())
    if (orphan := orphan_run(plan.out, plan.run_id)) is None:
        return False
    if dealt_with(lost_files(plan.out, orphan)) != [key]:
        raise DamagedRun(orphan_problem(plan.out, orphan, key))
    if orphan.row is None or committed_key(plan, orphan.row) != key or run_problems(plan.out, orphan.row):
        return False
    report(commit_row(plan.out, orphan.row, orphan.row_file))
    return True


def committed_key(plan: JobPlan, record: RunRecord | None) -> str | None:
    """The content key of the rows committed under the plan's run id (`record`: its runs row, for a
    plan in runs), None when there are none."""
    if plan.in_runs:
        paths = [f.path for f in record.files] if record is not None else []
    else:
        paths = [f["path"] for f in _added_files(plan)]
    keys = {part_key(path) for path in paths}
    return keys.pop() if len(keys) == 1 else ("mixed" if keys else None)


def held_rows(plan: JobPlan) -> str | None:
    """Whose rows are committed under the plan's run id (its runs row's, a run the runs table lost, or the
    run's rows in the table a plan not in runs adds to): "own" when written with the plan's parameters
    (equal content keys mean equal rows, so the job writes missing or damaged files back byte for byte, and
    what was built from those rows, marts, round_ev and sessions, still describes them), "other" when with
    other parameters (the job replaces them), None when there are none."""
    key = content_key(plan.parameters())
    if not plan.in_runs:
        held = committed_key(plan, None)
        return None if held is None else "own" if held == key else "other"
    if (record := _committed_run(plan)) is not None:
        return "own" if committed_key(plan, record) == key else "other"
    if (orphan := orphan_run(plan.out, plan.run_id)) is None:
        return None
    return "own" if dealt_with(lost_files(plan.out, orphan)) == [key] else "other"


def _added_files(plan: JobPlan, checksums: bool = False) -> list[dict]:
    """The committed files of the run's rows in the table a plan not in runs adds to a committed run (with
    the checksums their commit recorded)."""
    return plan.out.partition_files(plan.tables[0], plan.run_id, checksums=checksums)


def _sound(plan: JobPlan, record: RunRecord | None, overwrite: bool) -> bool:
    """Whether a committed run with the plan's rows passes its checks (sizes and contracts; the
    checksums too with `overwrite`). A damaged one is dealt again with `overwrite` (its tables' damaged
    logs are repaired before, by repair.repair_data_tables), else DamagedRun naming the repair command."""
    if record is None:
        return True
    problems = run_problems(plan.out, record, checksums=overwrite)
    if problems and not overwrite:
        raise DamagedRun(f"{problems[0]}; repair: {repair_command(plan.out, record)}")
    return not problems


def already_committed(plan: JobPlan, overwrite: bool, report: Callable[[str], None] = lambda line: None) -> bool:
    """Whether the rows the plan would write are committed and sound (a rerun is a no-op), a lost run's row
    committed again from its row file first (a line to `report`: _row_restored). Other rows under its run id
    (rows of a run the runs table lost too) are a one-line error unless `overwrite` (or the plan replaces
    them freely); an overwrite replaces them only when the new rows commit, table by table."""
    record = _committed_run(plan) if plan.in_runs else None
    if plan.in_runs and record is None and not overwrite and _row_restored(plan, report):
        return True
    held = committed_key(plan, record)
    if held == content_key(plan.parameters()):
        if not plan.in_runs:  # a file missing, missized or failing its recorded checksum is written again
            files = _added_files(plan, checksums=True)
            return not (missized_files(plan.out, files) or failing_checksums(plan.out, files))
        return _sound(plan, record, overwrite)
    if held is not None and plan.overwrite_needed and not overwrite:
        raise _taken(plan)
    return False


def _taken(plan: JobPlan, when: str = "") -> BaccaratError:
    return BaccaratError(f"{plan.what} already exists in {plan.out} with different parameters{when} "
                         "(use --overwrite to replace it, or another --run-id)")


def _may_replace(plan: JobPlan, overwrite: bool) -> Callable[[list[str]], bool] | None:
    """Which of a run's files the plan's commits may replace, when not any: files of its own parameters."""
    if overwrite or not plan.overwrite_needed:
        return None
    key = content_key(plan.parameters())
    return lambda paths: all(part_key(path) == key for path in paths)


def run_task(plan: JobPlan, settings: list[str], first: int, last: int,
             report_batch: Callable[[int, int], None]) -> dict:
    """One task, inside Spark: the store answers here with the driver's settings, then the plan's task."""
    plan.out.check_reachable_here(settings)
    return plan.write_range(first, last, report_batch)


def _check_written(plan: JobPlan, files: list[dict]) -> None:
    """Every object is in the store with the size its task recorded, or nothing is committed."""
    try:
        plan.out.check_written(files)
    except StorageError as error:
        raise JobFailed(f"{plan.what} was not committed: {error}") from None


def _stopped(context, plan: JobPlan) -> None:
    """A Ctrl-C, or a task that failed, while the plan's tasks ran: once the driver's JVM and its tasks'
    workers are gone (spark.ended_with_its_workers), the temporary files of this job's attempts go (a
    failed task removes its own, but Spark ends the others mid-write: on a disk that filled, they had
    carried on into the space it freed); every other file stays, other jobs' temporaries included
    (`baccarat vacuum` removes those, stale, that died). A second stop meanwhile does not cut it short."""
    with stops_held():
        if ended_with_its_workers(context):
            for table in plan.tables:
                plan.out.remove_temporaries(table, plan.run_id, plan.job, stale_seconds=None)


def run_job(context, plan: JobPlan, on_progress: Callable[[int, int], None] | None = None,
            on_again: Callable[[int], Callable[[int, int], None]] | None = None, overwrite: bool = False,
            before_commit: Callable[[], None] | None = None) -> Any:
    """Run the plan's tasks, check and commit what they wrote; returns plan.result() of it. Without
    `overwrite`, rows of other parameters that another command committed under its run id meanwhile
    refuse it (as already_committed refuses them at the start). before_commit() runs once every file is
    checked, before the first commit: what was built from the rows it replaces goes first, so that a job
    stopped between its commits and that clean-up (Ctrl-C, kill -9) leaves none of it beside the new rows.

    on_progress(shoes_done, rows_done) is called on the driver about ten times a second while the
    plan's tasks run; on_again(shoes), when the plan's settled() runs tasks again over ranges of that
    many shoes, gives the progress callable of that stage."""
    started = datetime.now(UTC)
    settings = plan.out.settings_names()

    def failed(message: str) -> JobFailed:
        return JobFailed(f"{plan.what} was not committed: a task failed writing under {plan.out}: {message}")

    def run_tasks(tasks_plan: JobPlan, ranges: list[tuple[int, int]], reporting) -> list[dict]:
        return run_ranges(context, ranges,
                          lambda first, last, report_batch: run_task(tasks_plan, settings, first, last, report_batch),
                          lambda result: result["files"][0]["rows"], reporting, failed)

    def rewrite(again: JobPlan, ranges: list[tuple[int, int]]) -> list[dict]:
        shoes = sum(last - first for first, last in ranges)
        return run_tasks(again, ranges, None if on_again is None else on_again(shoes))

    try:
        results = plan.settled(run_tasks(plan, plan.ranges(), on_progress), rewrite)
    except (KeyboardInterrupt, JobFailed):
        _stopped(context, plan)
        raise
    for table in plan.tables:  # every task succeeded: temporaries left are from dead attempts
        plan.out.remove_temporaries(table, plan.run_id, plan.job)
    results.sort(key=lambda r: r["first_shoe"])
    files = [entry | {"first_shoe": r["first_shoe"], "last_shoe": r["last_shoe"]}
             for r in results for entry in r["files"]]
    _check_written(plan, files)
    transaction = (f"{plan.application}:{plan.run_id}", int(started.timestamp() * 1000))
    may_replace = _may_replace(plan, overwrite)
    try:
        with stops_held(then_stop=True):  # a stop waits for the last commit, so that none is left half made
            if before_commit is not None:
                before_commit()
            versions = {table: plan.out.commit_partition(table, plan.run_id,
                                                         [f for f in files if f["table"] == table],
                                                         plan.table_schema(table), transaction, may_replace,
                                                         plan.commit_metadata(table))
                        for table in plan.tables}
            result = plan.result(Written(results, files, versions, started, datetime.now(UTC), context.master))
            if plan.in_runs:
                commit_run(plan.out, result)
    except PartitionTaken:
        raise _taken(plan, ", committed by another command while this one ran") from None
    except StorageError as error:
        raise JobFailed(f"{plan.what} was not committed: {error}") from None
    return result


def drop_run_rows(out: Store, table: str, run_id: str, application: str) -> bool:
    """Remove a run's rows from a table a job adds to a committed run (they describe a run an overwrite
    replaced), in a transaction of that job's application; whether the table had any."""
    if run_id not in out.run_ids(table):
        return False
    schema = pa.schema(out.delta_table(table).schema().to_arrow())
    transaction = (f"{application}:{run_id}", int(datetime.now(UTC).timestamp() * 1000))
    out.commit_partition(table, run_id, [], schema, transaction)
    return True
