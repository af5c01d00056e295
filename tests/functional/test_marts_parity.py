"""The Polars marts (pipeline/marts/marts_polars.py) against the DuckDB marts (marts_duckdb.py and
the SQL in pipeline/marts/sql): same columns, same rows in the same order, same values (exact
integers and decimals, floats within 1e-9 relative), on small runs of four rule sets. And each
engine's marts from the round groups the simulation counted (pipeline/round_groups.py) against the
same engine's marts from the rounds alone, as for a run dealt before the runs row kept them."""

from dataclasses import replace

import polars as pl
import pyarrow as pa
import pytest
from spark_jobs import built_tables, simulate
from polars.testing import assert_frame_equal

from pipeline.marts.choices import Engine
from pipeline.marts.engines import build_marts
from pipeline.marts.inputs import MARTS, load_run
from pipeline.storage import Store

# (rules, seed, shoes, partitions, road_stats_shoes): between them every bet kind; each run has
# several complete sessions of 1,000 rounds and an incomplete last block of 100; road statistics
# over every shoe (0) or over the first shoes only.
RUNS = [("punto_banco", 21, 160, 3, 0), ("super_six", 22, 130, 2, 70), ("ez_baccarat", 23, 190, 3, 0),
        ("chemin_de_fer", 24, 150, 3, 0)]  # chemin de fer: its equilibrium pair, compared with its exact value
ROAD_CELLS_SHOES = 50


@pytest.fixture(scope="module")
def marts(spark, tmp_path_factory):
    """Each run's marts from both engines, built once per run, from the round groups its runs row holds
    and from its rounds alone: {rules: (duckdb, polars, duckdb from rounds, polars from rounds)}."""
    out = tmp_path_factory.mktemp("marts_runs")
    built = {}
    for rules, seed, shoes, partitions, road_stats_shoes in RUNS:
        record = simulate(spark, out, rules=rules, seed=seed, shoes=shoes, partitions=partitions)
        counted = load_run(Store.parse(str(out)), record.run_id)
        assert counted.counted_partials  # the simulation counted its round groups
        uncounted = replace(counted, record=replace(counted.record, round_groups=None))
        built[rules] = tuple(built_tables(run.out, build_marts(engine, run, ROAD_CELLS_SHOES, road_stats_shoes))
                             for run in (counted, uncounted) for engine in (Engine.duckdb, Engine.polars))
    return built


def normalised(table: pa.Table) -> pl.DataFrame:
    """Integers as Int64 and decimals as Decimal(18, 2), as conforming to the contracts does.
    DuckDB's sums of counts are HUGEINT and reach Arrow as decimal(38, 0): integers too."""
    frame = pl.from_arrow(table)
    casts = []
    for name, dtype in frame.schema.items():
        if dtype.is_integer() or (isinstance(dtype, pl.Decimal) and dtype.scale == 0):
            casts.append(pl.col(name).cast(pl.Int64))
        elif isinstance(dtype, pl.Decimal):
            casts.append(pl.col(name).cast(pl.Decimal(18, 2)))
    return frame.with_columns(casts)


@pytest.mark.parametrize("mart", MARTS)
@pytest.mark.parametrize("rules", [rules for rules, *_ in RUNS])
def test_polars_marts_match_duckdb(marts, rules, mart):
    duck, polars = (normalised(tables[mart]) for tables in marts[rules][:2])
    assert duck.height > 0
    assert polars.schema == duck.schema  # same names, order and (normalised) types
    assert_frame_equal(duck, polars, check_dtypes=False, rel_tol=1e-9)


def test_every_mart_is_built(marts):
    for built in marts.values():
        assert all(set(tables) == set(MARTS) for tables in built)


@pytest.mark.parametrize("mart", MARTS)
@pytest.mark.parametrize("rules", [rules for rules, *_ in RUNS])
def test_marts_from_counted_round_groups_match_the_rounds(marts, rules, mart):
    """The round groups the simulation tasks counted give each engine the marts its own query over every
    round gives: the groups are not trusted, they are checked against the rounds they count."""
    for counted, from_rounds in zip(marts[rules][:2], marts[rules][2:]):
        assert_frame_equal(normalised(from_rounds[mart]), normalised(counted[mart]), rel_tol=1e-9)
