"""The composition job, on the job skeleton (pipeline.jobs): Spark schedules ranges of a committed
run's shoes as tasks; each task reads its shoes' rows from the run's committed rounds and shoes files,
computes the unseen composition before every round, each bet's exact EV and each count system's
counts, and writes one Parquet file; the driver commits every file to OUT/round_ev in one Delta transaction, in place of the run's earlier rows.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

import pyarrow as pa

from pipeline.bets import BET_KINDS
from pipeline.composition.counts import CountSystem, count_systems_for
from pipeline.composition.information import ROUND_COLUMNS, SHOE_COLUMNS, compositions_array, unseen_compositions
from pipeline.composition.kernel import NEEDS_A_FIXED_TABLEAU, round_evs
from pipeline.errors import BaccaratError
from pipeline.jobs import JobPlan, Written, new_tag
from pipeline.orphans import readable_run
from pipeline.rule_sets import RuleSet
from pipeline.runs import RunRecord, check_run, shoe_rows
from pipeline.schemas import contract
from pipeline.storage import Store
from pipeline.tasks import content_key, options_record, part_name, partitions_for, shoe_ranges, write_files

ROUND_EV = "round_ev"
SHOES_PER_BATCH = 256  # a batch's compositions, EVs and counts stay a few megabytes
SHOES_PER_TASK = 10_000  # the exact EVs cost far more per shoe than dealing: smaller tasks than simulate's


@dataclass(frozen=True)
class Plan(JobPlan):
    run: RunRecord  # the committed run's
    rule_set: RuleSet
    shoes: int  # the run's first `shoes` shoes
    counts: tuple[CountSystem, ...]
    out: Store
    partitions: int | None = None  # None: chosen from the cluster's parallelism once Spark is up
    job: str = field(default_factory=new_tag)  # tags this job's temporary files
    given: tuple[str, ...] | None = None  # --shoes and --counts as given, paths absolute (its commit records them)
    tables = (ROUND_EV,)
    application = "baccarat-composition"
    in_runs = False
    overwrite_needed = False  # the rows describe the run: other shoes or count systems replace them

    @property
    def what(self) -> str:
        return f"round_ev of run {self.run_id!r}"

    @property
    def run_id(self) -> str:
        return self.run.run_id

    @property
    def bets(self) -> tuple[str, ...]:
        return tuple(self.rule_set.bets)

    @property
    def count_names(self) -> tuple[str, ...]:
        return tuple(system.name for system in self.counts)

    def ranges(self) -> list[tuple[int, int]]:
        return shoe_ranges(self.shoes, self.partitions)

    def parameters(self) -> dict:
        """The rows depend on the run's parameters, the shoes and the count systems alone, so files of
        equal content keys hold equal rows whatever the partitions."""
        return {"run": self.run.parameters, "shoes": self.shoes,
                "counts": [system.model_dump(mode="json") for system in self.counts]}

    def write_range(self, first: int, last: int, report_batch: Callable[[int, int], None]) -> dict:
        return write_range(self, first, last, report_batch)

    def commit_metadata(self, table: str) -> dict:
        """The options the command was given (OPTIONS_GIVEN), which the repair line of the rows repeats."""
        return options_record(self.given)

    def table_schema(self, table: str) -> pa.Schema:
        return table_schema(self)

    def result(self, written: Written) -> dict:
        return {"run_id": self.run_id, "shoes": self.shoes, "rounds": sum(f["rows"] for f in written.files),
                "files": written.files, "version": written.versions[ROUND_EV], "counts": list(self.count_names),
                "partitions": len(written.results)}


def plan_for(out: Store, run_id: str, shoes: int | None, counts: str | None, partitions: int | None = None) -> Plan:
    """The plan for a committed run whose files pass their checks, or a one-line error: an unknown run,
    a game whose players decide draws, more shoes than it holds, count systems that are bad or meant for
    bets its rule set lacks.
    `counts`: comma-separated names or paths, None for the shipped systems its rule set can use."""
    run, rule_set = readable_run(out, run_id)
    rule_set.check_fixed_tableau(NEEDS_A_FIXED_TABLEAU)
    if shoes is not None and shoes > run.shoes:
        raise BaccaratError(f"--shoes {shoes:,} is more than run {run_id!r} holds ({run.shoes:,} shoes)")
    systems = count_systems_for(rule_set, counts)
    check_run(out, run)
    return Plan(run, rule_set, shoes or run.shoes, systems, out, partitions)


def round_ev_rows(plan: Plan, rounds: pa.Table, shoes: pa.Table) -> pa.Table:
    """The round_ev rows of some whole shoes, as the contract orders them."""
    unseen = unseen_compositions(rounds, shoes, plan.rule_set.decks)
    compositions = compositions_array(unseen)
    unseen_cards = unseen["unseen_cards"].to_numpy()
    columns = {"shoe_id": unseen["shoe_id"], "round": unseen["round"], "unseen_cards": unseen["unseen_cards"]}
    for kind, evs in zip(plan.bets, round_evs(plan.rule_set, compositions).T):
        columns[f"ev_{kind}"] = evs
    for system in plan.counts:
        running = system.running_counts(compositions, plan.rule_set.decks)
        columns[f"running_count_{system.name}"] = running
        columns[f"true_count_{system.name}"] = system.true_counts(running, unseen_cards)
    schema = contract(ROUND_EV).arrow(plan.bets, plan.count_names)
    return pa.table(columns).select(schema.names).cast(schema)


def write_range(plan: Plan, first: int, last: int,
                report_batch: Callable[[int, int], None] = lambda shoes, rounds: None) -> dict:
    """Compute and write the round_ev rows of shoes [first, last) as one file; runs inside a Spark task.
    report_batch(shoes, rounds) hears the range's counts so far after each batch written."""
    def batches():
        for start in range(first, last, SHOES_PER_BATCH):
            stop = min(start + SHOES_PER_BATCH, last)
            yield stop - first, (round_ev_rows(plan, shoe_rows(plan.out, plan.run, "rounds", list(ROUND_COLUMNS), start, stop),
                                               shoe_rows(plan.out, plan.run, "shoes", list(SHOE_COLUMNS), start, stop)),)

    name = part_name(first, last, content_key(plan.parameters()))
    files = write_files(plan.out, plan.run_id, name, plan.job, plan.tables, batches(), report_batch,
                        compression="zstd")
    return {"first_shoe": first, "last_shoe": last - 1, "files": files}


def table_schema(plan: Plan) -> pa.Schema:
    """The round_ev table's schema: every bet kind, and the count systems of this job and of those
    already in the table (a run's commit must not drop another run's columns)."""
    ours = contract(ROUND_EV).table_schema(tuple(BET_KINDS), plan.count_names)
    delta = plan.out.delta_table(ROUND_EV)
    if delta is None:
        return ours
    held = pa.schema(delta.schema().to_arrow())
    kept = [ours.field(f.name) if f.name in ours.names else f.with_nullable(True) for f in held]
    return pa.schema(kept + [f for f in ours if f.name not in held.names])


def default_partitions(shoes: int, parallelism: int) -> int:
    return partitions_for(shoes, parallelism, SHOES_PER_TASK)
