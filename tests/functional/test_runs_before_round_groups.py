"""A store whose runs table was created before runs rows kept their round groups (schemas/runs.yaml,
round_groups): its old rows still read, verify and build their marts (counting the rounds themselves),
and a new run committed beside them adds the column to the table, keeping the old rows."""

from dataclasses import replace

import pyarrow as pa
import pytest
from spark_jobs import built_tables, simulate

import pipeline.runs
from pipeline.cli import main
from pipeline.marts.choices import Engine
from pipeline.marts.engines import build_marts
from pipeline.marts.inputs import MARTS, load_run
from pipeline.runs import RUNS, read_runs
from pipeline.schemas import contract
from pipeline.storage import Store

PARAMETERS = {"rules": "super_six", "seed": 5, "shoes": 60, "partitions": 2}


def without_round_groups(name: str):
    """The contracts as they were before the column: the runs table without round_groups."""
    found = contract(name)
    if name != RUNS:
        return found
    return replace(found, columns=tuple(c for c in found.columns if c["name"] != "round_groups"))


@pytest.fixture(scope="module")
def store(spark, tmp_path_factory):
    out = tmp_path_factory.mktemp("before_round_groups")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pipeline.runs, "contract", without_round_groups)
        simulate(spark, out, run_id="old", **PARAMETERS)
    assert "round_groups" not in pa.schema(Store.parse(str(out)).delta_table(RUNS).schema().to_arrow()).names
    simulate(spark, out, run_id="new", **PARAMETERS)
    return Store.parse(str(out))


def test_a_new_run_adds_the_column_and_old_rows_read_without_it(store):
    assert "round_groups" in pa.schema(store.delta_table(RUNS).schema().to_arrow()).names
    runs = {run.run_id: run for run in read_runs(store)}
    assert runs["old"].round_groups is None
    assert sum(rounds for _, _, rounds, *_ in runs["new"].round_groups) == runs["new"].rounds == runs["old"].rounds


def test_an_old_run_verifies_and_builds_the_marts_the_new_one_does(store):
    assert main(["verify", "--out", store.uri]) == 0
    assert main(["marts", "--out", store.uri]) == 0
    for engine in (Engine.duckdb, Engine.polars):
        old, new = (built_tables(store, build_marts(engine, load_run(store, run_id), 20, 0)) for run_id in ("old", "new"))
        for mart in MARTS:
            assert old[mart].equals(new[mart]), (engine, mart)
