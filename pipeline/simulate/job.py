"""The simulation job, on the job skeleton (pipeline.jobs): Spark schedules ranges of shoes as tasks;
each task deals its range with the kernel and writes its own Parquet files with pyarrow, through the
store's filesystem (a retried or speculative duplicate writes the same bytes to the same name); the
driver commits every file of a table in one Delta transaction, rounds and shoes, then the run's row in
`runs`, last.

Rows never pass through Spark's DataFrame writer: Spark is the scheduler only.
"""

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.bets import BET_KINDS
from pipeline.games.pairs import StrategyPair, checked_pair
from pipeline.jobs import JobPlan, Written, new_tag, run_record
from pipeline.round_groups import merged_round_groups
from pipeline.rule_sets import RuleSet
from pipeline.runs import DATA_TABLES, RunRecord, check_run_id
from pipeline.schemas import contract
from pipeline.simulate.batch import Dealer
from pipeline.storage import Store
from pipeline.tasks import content_key, part_name, partitions_for, shoe_ranges, write_files

SHOES_PER_BATCH = 4096  # the kernel's working set stays in cache-friendly, bounded memory
SHOES_PER_TASK = 100_000  # few enough tasks that Spark's per-task cost stays small
OUTCOME_TOTALS = {"B": "banker_wins", "P": "player_wins", "T": "ties"}  # shoes columns counting each outcome
WRITE_OPTIONS = {"compression": "zstd", "store_schema": False, "store_decimal_as_integer": True}


@dataclass(frozen=True)
class Plan(JobPlan):
    run_id: str
    rule_set: RuleSet
    seed: int
    shoes: int
    out: Store
    partitions: int | None = None  # None: chosen from the cluster's parallelism once Spark is up
    job: str = field(default_factory=new_tag)  # tags this job's temporary files
    strategies: StrategyPair | None = None  # the pair played in a game with options, else None
    tables = DATA_TABLES
    application = "baccarat"
    in_runs = True
    overwrite_needed = True

    def __post_init__(self):
        checked_pair(self.rule_set, self.strategies)

    @property
    def what(self) -> str:
        return f"run {self.run_id!r}"

    def ranges(self) -> list[tuple[int, int]]:
        """Contiguous shoe ranges [first, last), one per task and file."""
        return shoe_ranges(self.shoes, self.partitions)

    def parameters(self) -> dict:
        """What determines the content; two runs with equal parameters hold equal rows."""
        parameters = {"rules": self.rule_set.model_dump(mode="json"), "seed": self.seed, "shoes": self.shoes}
        if self.strategies is not None:
            parameters["strategies"] = self.strategies.document()
        return parameters

    def content_key(self) -> str:
        return content_key(self.parameters())

    def write_range(self, first: int, last: int, report_batch: Callable[[int, int], None]) -> dict:
        return write_range(self, first, last, report_batch)

    def table_schema(self, table: str) -> pa.Schema:
        return contract(table).table_schema(tuple(BET_KINDS))

    def result(self, written: Written) -> RunRecord:
        return replace(run_record(self, written),
                       round_groups=merged_round_groups([result["round_groups"] for result in written.results]))


def plan_for(out: Store, rule_set: RuleSet, seed: int, shoes: int, run_id: str | None, partitions: int | None,
             strategies: StrategyPair | None) -> Plan:
    """The plan of a one-hand run: its id (default RULES-sSEED-nSHOES) checked, and a writable store."""
    run_id = check_run_id(f"{rule_set.name}-s{seed}-n{shoes}" if run_id is None else run_id)
    return Plan(run_id, rule_set, seed, shoes, out.check_writable(), partitions, strategies=strategies)


def default_partitions(shoes: int, parallelism: int) -> int:
    return partitions_for(shoes, parallelism, SHOES_PER_TASK)


def write_range(plan: Plan, first: int, last: int,
                report_batch: Callable[[int, int], None] = lambda shoes, rounds: None) -> dict:
    """Deal shoes [first, last) and write their rounds and shoes files; runs inside a Spark task.
    report_batch(shoes, rounds) hears the range's counts so far after each batch written."""
    dealer = Dealer.of(plan.rule_set, plan.strategies)
    outcomes = {"B": 0, "P": 0, "T": 0}
    round_counts = dealer.new_round_counts()

    def batches():
        for start in range(first, last, SHOES_PER_BATCH):
            tables = dealer.deal(plan.seed, start, min(SHOES_PER_BATCH, last - start), round_counts)
            for outcome, column in OUTCOME_TOTALS.items():  # the shoes' totals: a few thousand rows, not every round
                outcomes[outcome] += pc.sum(tables[1].column(column)).as_py()
            yield min(start + SHOES_PER_BATCH, last) - first, tables

    files = write_files(plan.out, plan.run_id, part_name(first, last, plan.content_key()), plan.job, DATA_TABLES,
                        batches(), report_batch, **WRITE_OPTIONS)
    return {"first_shoe": first, "last_shoe": last - 1, "outcomes": outcomes, "files": files,
            "round_groups": dealer.round_groups(round_counts)}
