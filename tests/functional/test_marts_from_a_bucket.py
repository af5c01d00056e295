"""The marts of a run in a bucket of the local S3 server against those of its local copy: DuckDB's range
tasks read each object once, through pyarrow, and one process holds one range of shoes at a time."""

import shutil
import uuid

import pyarrow.fs as pafs
import pytest
from spark_jobs import built_tables, simulate
from test_marts_cluster import ROAD_CELLS_SHOES, assert_same_marts

from pipeline import duckdb_files
from pipeline.composition import job as composition_job
from pipeline.jobs import run_job
from pipeline.marts import cluster, composition_duckdb, marts_duckdb
from pipeline.marts import partials as partials_module
from pipeline.marts.engines import Engine, build_marts
from pipeline.marts.inputs import COMPOSITION_MARTS, MARTS, load_run
from pipeline.marts.partials import plan_ranges
from pipeline.storage import Store

RUN_TABLES = ("rounds", "shoes", "round_ev")  # what the marts read of a run


@pytest.fixture(scope="module")
def bucket_run(spark, s3_endpoint, tmp_path_factory):
    """ez baccarat with round_ev rows in a bucket of the local S3 server, and the run in a local copy of it."""
    import boto3

    name = f"ranges-{uuid.uuid4().hex[:12]}"
    boto3.client("s3", endpoint_url=s3_endpoint).create_bucket(Bucket=name)
    store = Store.parse(f"s3://{name}/data")
    record = simulate(spark, str(store), rules="ez_baccarat", seed=45, shoes=60, partitions=3)
    run_job(spark, composition_job.plan_for(store, record.run_id, 40, None, partitions=2))
    local = tmp_path_factory.mktemp("bucket_copy")
    pafs.copy_files(store.fs_path(), str(local), source_filesystem=store.filesystem,
                    destination_filesystem=pafs.LocalFileSystem())
    return load_run(store, record.run_id), load_run(Store.parse(str(local)), record.run_id)


@pytest.mark.parametrize("engine", list(Engine))
def test_marts_of_ranges_read_from_a_bucket_equal_those_of_its_local_copy(bucket_run, engine, monkeypatch):
    """DuckDB's range tasks read the bucket through pyarrow datasets: not one byte through the Python file
    object of pipeline/duckdb_files.py (made to fail here)."""
    def no_python_reads(self, size=-1):
        raise AssertionError("a range read the bucket through a Python file object")

    monkeypatch.setattr(duckdb_files.PositionalFile, "read", no_python_reads)
    in_bucket, on_disk = bucket_run
    built = built_tables(in_bucket.out, build_marts(engine, in_bucket, ROAD_CELLS_SHOES, 0, ranges=3))
    expected = built_tables(on_disk.out, build_marts(engine, on_disk, ROAD_CELLS_SHOES, 0))
    assert set(expected) == set(MARTS) | set(COMPOSITION_MARTS)
    assert all(table.num_rows > 0 for table in expected.values())
    assert_same_marts(built, expected)


@pytest.mark.parametrize("module", [marts_duckdb, composition_duckdb], ids=["marts", "composition"])
def test_duckdb_reads_a_ranges_objects_once_not_once_per_partial(bucket_run, module, monkeypatch):
    """On an object store a range's files are read into DuckDB tables once, before its partial queries:
    with the run's objects deleted once the first query starts, the marts are still the local copy's."""
    in_bucket, on_disk = bucket_run
    bucket = in_bucket.out.fs_path().split("/")[0]
    copy = Store.parse(f"s3://{bucket}/once-{uuid.uuid4().hex[:12]}")
    pafs.copy_files(in_bucket.out.fs_path(), copy.fs_path(), source_filesystem=in_bucket.out.filesystem,
                    destination_filesystem=copy.filesystem)
    run = load_run(copy, in_bucket.record.run_id)
    query = module.sql

    def deleting_the_run_first(name):
        for table in RUN_TABLES:
            copy.filesystem.delete_dir_contents(copy.fs_path(table), missing_dir_ok=True)
        return query(name)

    monkeypatch.setattr(module, "sql", deleting_the_run_first)
    if module is marts_duckdb:
        built, expected = (built_tables(built_from.out, module.build_marts(built_from, ROAD_CELLS_SHOES, 0))
                           for built_from in (run, on_disk))
    else:
        built, expected = (module.build_composition_marts(built_from, built_from.added_files("round_ev"))
                           for built_from in (run, on_disk))
    for table in RUN_TABLES:
        assert not copy.filesystem.get_file_info(pafs.FileSelector(copy.fs_path(table), allow_not_found=True))
    assert_same_marts(built, expected)


def test_one_process_on_a_bucket_holds_one_range_of_shoes_at_a_time(bucket_run, cli, tmp_path, monkeypatch):
    """Without --master, a run in a bucket is built by ranges of at most SHOES_PER_RANGE shoes (their files
    are held in memory while the range's partials run); on a local folder by one range."""
    in_bucket, on_disk = bucket_run
    planned = []

    def recording(run, ranges, build=""):
        planned.append((run.out.is_local, ranges))
        return plan_ranges(run, ranges, build)

    monkeypatch.setattr(cluster, "SHOES_PER_RANGE", 25)
    monkeypatch.setattr(partials_module, "plan_ranges", recording)
    for out in (in_bucket.out, Store.parse(str(tmp_path / "copy"))):
        if out.is_local:
            shutil.copytree(on_disk.out.uri, out.uri)
        status, _, err = cli("marts", "--out", out, "--run-id", in_bucket.record.run_id,
                             "--warehouse", tmp_path / f"{out.scheme}.duckdb")
        assert status == 0, err
    assert set(planned) == {(False, 3), (True, 1)}  # 60 shoes: the marts and the composition marts alike
