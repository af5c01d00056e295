"""Helpers of the functional tier that run the pipeline's jobs through the suite's SparkContext."""

import os
from pathlib import Path

import polars as pl
import pyarrow as pa

from pipeline.cli import main
from pipeline.games.pairs import strategy_pair
from pipeline.jobs import already_committed, run_job
from pipeline.marts.cluster import default_ranges
from pipeline.marts.publish import WrittenMart
from pipeline.rule_sets import load_rule_set
from pipeline.runs import RunRecord, read_run
from pipeline.simulate import job
from pipeline.storage import Store
from pipeline.tasks import shoe_ranges


def simulate(spark, out: Path | str, rules: str = "punto_banco", seed: int = 7, shoes: int = 200,
             partitions: int = 3, run_id: str | None = None, player_strategy: str | None = None,
             banker_strategy: str | None = None) -> RunRecord:
    """Run the simulation job into `out` (a folder or URI) through the suite's session; returns the
    run's record. A game with options plays the named strategies, by default its equilibrium."""
    store = Store.parse(str(out)).check_writable()
    rule_set = load_rule_set(rules)
    plan = job.Plan(run_id or f"{rules}-{seed}-{shoes}", rule_set, seed, shoes, store, partitions,
                    strategies=strategy_pair(rule_set, player_strategy, banker_strategy))
    assert not already_committed(plan, overwrite=False)
    return run_job(spark, plan)


def simulate_with_marts(spark, out: Path, **parameters) -> Path:
    """A committed run (simulate's parameters) with its marts and the warehouse published; returns out."""
    simulate(spark, out, **parameters)
    assert main(["marts", "--out", str(out)]) == 0
    return out


def read_table(out: Path | str, run_id: str, table: str) -> pl.DataFrame:
    """Every file of a committed run's table, in the order its runs row lists them."""
    store = Store.parse(str(out))
    paths = [store.reader_path(f.path) for f in read_run(store, run_id).files_of(table)]
    return pl.concat([pl.read_parquet(p, hive_partitioning=False, storage_options=store.polars_options())
                      for p in paths])


def built_tables(out: Store, marts: dict) -> dict[str, pa.Table]:
    """Built marts as tables: a mart the range tasks wrote (WrittenMart) as the rows of its files, in
    range order, as they are committed (conformed, without the run_id Delta keeps in its log)."""
    def rows(mart) -> pa.Table:
        if not isinstance(mart, WrittenMart):
            return mart
        return pa.concat_tables([out.read_file_rows(f["path"]) for f in mart.files])

    return {name: rows(mart) for name, mart in marts.items()}


def one_process_ranges(shoes: int) -> int:
    """The shoe ranges `baccarat marts` builds a run of a local folder in, without --master (at least one
    per core), and so the files of a mart the range tasks write."""
    return len(shoe_ranges(shoes, default_ranges(shoes, os.cpu_count() or 1)))
