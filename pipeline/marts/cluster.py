"""The marts' partials as Spark tasks: one task per shoe range computes that range's partials with the
chosen engine, reading the run's files straight from the store, and returns them (small Arrow tables)
to the driver, which merges them and runs the final queries (pipeline/marts/partials.py)."""

from dataclasses import replace
from functools import partial
from math import ceil

from pipeline.errors import WorldFailure
from pipeline.marts.choices import MAX_RANGES
from pipeline.marts.partials import RangeRunner, ShoeRange
from pipeline.storage import Store
from pipeline.tasks import collect_or_fail

# About 16M rounds, two of the simulation's files: a task's engine holds them in 540 to 790 MB, and a range
# costs some 50 ms beyond its work in one process and more as a Spark task (docs/measurements.md)
SHOES_PER_RANGE = 200_000
# A range's composition partials unpivot its round_ev rows by bet and count system: about 0.4 GB (DuckDB)
# and 1 GB (Polars) of working memory per 10,000 shoes, whatever the run's size
ROUND_EV_SHOES_PER_RANGE = 10_000


def default_ranges(shoes: int, parallelism: int, round_ev_shoes: int = 0) -> int:
    """A range per core, and more for a big run so that a task stays bounded: at most SHOES_PER_RANGE
    shoes, and at most ROUND_EV_SHOES_PER_RANGE of the run's first `round_ev_shoes`, which have round_ev rows."""
    per_range = ROUND_EV_SHOES_PER_RANGE if round_ev_shoes > ROUND_EV_SHOES_PER_RANGE else SHOES_PER_RANGE
    wanted = ceil(shoes / per_range)
    return max(1, min(shoes, MAX_RANGES, max(parallelism, wanted)))


def spark_ranges(context, out: Store) -> RangeRunner:
    """Run each range's partials as one Spark task of `context`, its engine on the task's cores
    (spark.task.cpus: DuckDB's threads by the range, Polars' by the POLARS_MAX_THREADS pipeline/spark.py
    gives the executors); a task's OSError is one line (exit 1). Each task first checks that its executor
    has the settings of the store OUT the driver has, and reaches it (as the simulation's tasks do)."""
    cores = int(context.getConf().get("spark.task.cpus", "1"))
    settings = out.settings_names()

    def run_ranges(task, ranges):
        on_cores = [replace(shoes, threads=cores) for shoes in ranges]
        tasks = context.parallelize(on_cores, len(on_cores)).map(partial(_reaching_the_store, out, settings, task))
        return collect_or_fail(tasks, lambda: None, WorldFailure)

    return run_ranges


def _reaching_the_store(out: Store, settings: list[str], task, shoes: ShoeRange):
    """task(shoes), in a task whose executor has the variables `settings` and reaches OUT (an OSError
    naming what is missing: an executor without AWS_* read as a 403 of the store, ACCESS_DENIED)."""
    out.check_reachable_here(settings)
    return task(shoes)
