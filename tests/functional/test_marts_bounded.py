"""What the marts' range tasks send the driver is bounded by the run's distinct values, not its shoes
(pipeline/marts/partials.py): shoe_summary, one row per shoe, is written by the range tasks instead, a
file per range, and committed by write_marts in one commit once every file is found whole."""

import shutil
from dataclasses import replace

import polars as pl
import pytest
from polars.testing import assert_frame_equal
from spark_jobs import simulate

from pipeline.errors import WorldFailure
from pipeline.marts import marts_duckdb, partials_polars
from pipeline.marts.engines import Engine, build_marts
from pipeline.marts.inputs import EVERY_MART, load_run
from pipeline.marts.partials import MERGED, build_id, plan_ranges
from pipeline.marts.publish import WrittenMart, write_marts
from pipeline.schemas import contract
from pipeline.storage import Store
from pipeline.tasks import shoe_ranges

SHOES, RANGES = 1_000, 10
CELL_SHOES = 50  # the road outcomes: of the first 50 shoes, in the first range whatever its size


@pytest.fixture(scope="module")
def run_folder(spark, tmp_path_factory):
    out = tmp_path_factory.mktemp("bounded")
    record = simulate(spark, out, rules="punto_banco", seed=61, shoes=SHOES, partitions=2)
    return out, record.run_id


@pytest.fixture
def run(run_folder, tmp_path):
    """The run in a folder of its own, with no marts committed."""
    out, run_id = run_folder
    shutil.copytree(out, tmp_path / "out")
    return load_run(Store.parse(str(tmp_path / "out")), run_id)


@pytest.mark.parametrize("counted", [True, False], ids=["groups-counted", "dealt-before-groups"])
@pytest.mark.parametrize("road_stats_shoes", [CELL_SHOES, 0], ids=["road-sample", "roads-of-every-shoe"])
@pytest.mark.parametrize("partials_of", [marts_duckdb.partials, partials_polars.partials], ids=["duckdb", "polars"])
def test_what_a_range_task_returns_does_not_grow_with_its_shoes(run, partials_of, road_stats_shoes, counted):
    """A range of the whole run against one of its tenth: a partial of one row per shoe or per block would
    hold ten times the rows; these hold the distinct values of their keys (nets, streak lengths,
    checkpoints, road column lengths), the two edges of each session size, and shoe_summary's one file
    entry. The road statistics of every shoe (0) sent the outcome of every round before. The round
    groups come from the runs row when the simulation counted them, else from every range."""
    if not counted:
        run = replace(run, record=replace(run.record, round_groups=None))
    small, whole = plan_ranges(run, RANGES, build_id())[0], plan_ranges(run, 1, build_id())[0]
    assert (whole.last - whole.first) == RANGES * (small.last - small.first) == SHOES
    rows = [{name: table.num_rows for name, table in partials_of(run, shoes, CELL_SHOES, road_stats_shoes).items()}
            for shoes in (small, whole)]
    assert set(rows[1]) == set(MERGED) - ({"round_groups"} if counted else set())
    for name, held in rows[1].items():
        assert 0 < held < 4 * rows[0][name], name
    assert rows[1]["shoe_summary"] == 1 and rows[1]["session_edges"] <= 4
    assert rows[1]["road_outcomes"] == rows[0]["road_outcomes"]


@pytest.mark.parametrize("engine", list(Engine))
def test_shoe_summary_is_one_commit_of_one_file_per_range_equal_to_one_process(run, engine):
    store, table = run.out, contract("shoe_summary").table
    write_marts(run, build_marts(engine, run, 20, 0))
    one_process = pl.from_arrow(store.read_rows(table, [run.run_id])).sort("shoe_id")
    before = store.delta_table(table).version()
    built = build_marts(engine, run, 20, 0, ranges=3)
    assert isinstance(built["shoe_summary"], WrittenMart)
    write_marts(run, built)
    assert store.delta_table(table).version() == before + 1
    files = sorted(f["path"] for f in store.partition_files(table, run.run_id))
    assert files == sorted(f["path"] for f in built["shoe_summary"].files)
    assert sorted(path.rsplit("-shoes-", 1)[1] for path in files) == sorted(
        f"{first}-{last}.parquet" for first, last in shoe_ranges(SHOES, 3))
    assert_frame_equal(pl.from_arrow(store.read_rows(table, [run.run_id])).sort("shoe_id"), one_process)


def test_a_retried_range_task_writes_the_same_shoe_summary_file(run):
    shoes = plan_ranges(run, 3, build_id())[1]
    first, again = (marts_duckdb.partials(run, shoes, 0, 0)["shoe_summary"].to_pylist() for _ in range(2))
    assert first == again and first[0]["rows"] == shoes.last - shoes.first
    assert run.out.sha256(first[0]["path"]) is not None


@pytest.mark.parametrize("damage", ["missing", "missized"])
def test_a_missing_or_missized_shoe_summary_file_is_one_line_and_nothing_is_committed(run, damage):
    built = build_marts(Engine.duckdb, run, 20, 0, ranges=2)
    entry = built["shoe_summary"].files[1]
    path = run.out.fs_path(entry["path"])
    if damage == "missing":
        run.out.filesystem.delete_file(path)
    else:
        with open(path, "ab") as file:
            file.write(b"torn")
    with pytest.raises(WorldFailure) as failure:
        write_marts(run, built)
    message = str(failure.value)
    found = "is missing" if damage == "missing" else f"holds {entry['size'] + 4:,} bytes"
    assert "\n" not in message and f"{path} {found}, its task wrote {entry['size']:,}" in message
    assert message.startswith(f"the marts of run {run.run_id!r} were not committed")
    assert all(run.out.delta_table(contract(name).table) is None for name in EVERY_MART)
