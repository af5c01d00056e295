"""The marts of a run in a bucket of the local S3 server against those of its local copy: DuckDB's range
tasks read each object once, through pyarrow, and one process holds one range of shoes at a time."""

import hashlib
import io
import shutil
import uuid
from dataclasses import replace

import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable
from spark_jobs import built_tables, simulate
from test_marts_cluster import ROAD_CELLS_SHOES, assert_same_marts

from pipeline import duckdb_files
from pipeline.composition import job as composition_job
from pipeline.jobs import run_job
from pipeline.marts import cluster
from pipeline.marts import partials as partials_module
from pipeline.marts.engines import Engine, build_marts
from pipeline.marts.inputs import COMPOSITION_MARTS, MARTS, SYSTEM_MARTS, load_run
from pipeline.marts.partials import plan_ranges
from pipeline.runs import read_run
from pipeline.schemas import contract
from pipeline.storage import Store


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


def _copy_of(run):
    """A copy of a run in a new prefix of its bucket, loaded as the marts load it."""
    bucket = run.out.fs_path().split("/")[0]
    copy = Store.parse(f"s3://{bucket}/copy-{uuid.uuid4().hex[:12]}")
    pafs.copy_files(run.out.fs_path(), copy.fs_path(), source_filesystem=run.out.filesystem,
                    destination_filesystem=copy.filesystem)
    return copy


@pytest.mark.parametrize("engine", list(Engine))
def test_the_marts_read_every_object_of_a_run_in_a_bucket_once_in_the_tasks(bucket_run, engine,
                                                                          s3_log, monkeypatch):
    """Each object of the run is fetched whole once, by the task of the range holding it, which checks its
    checksum and computes the marts and the composition marts from it: no pass over every byte before the
    tasks (on an object store load_run hashes no rounds, shoes or round_ev object), no second pass of tasks
    for the composition marts (which read every rounds object again), and no query reads the bucket again."""
    in_bucket, on_disk = bucket_run
    monkeypatch.setattr(Store, "sha256", lambda self, relative: pytest.fail(f"{relative} hashed before the tasks"))
    copy = _copy_of(in_bucket)
    loading_from = len(s3_log.read_text().splitlines())
    run = load_run(copy, in_bucket.record.run_id)
    served_before = len(s3_log.read_text().splitlines())
    data_objects = [copy.fs_path(entry.path) for entry in run.record.files]
    # load_run opens no rounds or shoes object: the task that fetches one checks its contract too
    assert not [line for line in s3_log.read_text().splitlines()[loading_from:served_before]
                if any(f"/{path} " in line for path in data_objects)]
    objects = data_objects + [path.removeprefix("s3://") for path in run.added_files("round_ev")]
    built = built_tables(copy, build_marts(engine, run, ROAD_CELLS_SHOES, 0))
    served = s3_log.read_text().splitlines()[served_before:]
    fetched = {path: sum(f"GET /{path} " in line for line in served) for path in objects}
    # the range tasks read rounds, shoes and round_ev once for the marts and the composition marts alike
    assert fetched == dict.fromkeys(objects, 1)
    assert_same_marts(built, built_tables(on_disk.out, build_marts(engine, on_disk, ROAD_CELLS_SHOES, 0)))


@pytest.mark.parametrize("table", ["rounds", "round_ev"])
def test_an_object_of_a_run_in_a_bucket_that_fails_its_checksum_is_found_before_anything_is_committed(
        bucket_run, cli, tmp_path, table):
    """An object replaced by one of the same size (a byte changed mid-file): the range's task finds it, and
    the command ends in one line naming it, exit 1, with no mart committed and no warehouse. A rounds file
    fails the SHA-256 its runs row records, a round_ev file the one its commit records."""
    in_bucket, _ = bucket_run
    copy = _copy_of(in_bucket)
    files = [entry.path for entry in in_bucket.record.files_of("rounds")] if table == "rounds" else \
        [path.removeprefix(in_bucket.out.location() + "/") for path in in_bucket.added_files(table)]
    damaged = copy.fs_path(files[1])
    data = bytearray(copy.filesystem.open_input_file(damaged).readall())
    with copy.filesystem.open_output_stream(damaged) as sink:
        middle = len(data) // 2
        sink.write(bytes(data[:middle]) + bytes([data[middle] ^ 1]) + bytes(data[middle + 1:]))
    for master in ([], ["--master", "local[2]"]):
        status, out, err = cli("marts", "--out", copy, "--run-id", in_bucket.record.run_id, *master,
                               "--warehouse", tmp_path / "w.duckdb")
        assert (status, out) == (1, ""), err
        assert len(err.strip().splitlines()) == 1 and "fails its checksum" in err and f"s3://{damaged}" in err, err
        assert not [table for table in copy.tables() if table.startswith("marts")]
        assert not (tmp_path / "w.duckdb").exists()


def _break_contract(copy, run_id: str) -> str:
    """A rounds object of the run replaced by its rows without net_tie, its runs row's size and SHA-256
    rewritten to match (as a writer of another contract would record them): only its contract is wrong."""
    record = read_run(copy, run_id)
    entry = record.files_of("rounds")[1]
    with copy.filesystem.open_input_file(copy.fs_path(entry.path)) as source:
        rows = pq.read_table(source).drop_columns(["net_tie"])
    sink = io.BytesIO()
    pq.write_table(rows, sink)
    with copy.filesystem.open_output_stream(copy.fs_path(entry.path)) as target:
        target.write(sink.getvalue())
    rewritten = replace(entry, size=len(sink.getvalue()), sha256=hashlib.sha256(sink.getvalue()).hexdigest())
    files = replace(record, files=tuple(rewritten if f == entry else f for f in record.files)).row()["files"]
    DeltaTable(copy.location("runs"), storage_options=copy.storage_options).update(
        {"files": f"'{files}'"}, predicate=f"run_id = '{run_id}'")
    return copy.fs_path(entry.path)


@pytest.mark.parametrize("damage", ["contract", "missing"])
def test_an_object_that_breaks_its_contract_or_is_gone_is_found_by_its_task_before_anything_is_committed(
        bucket_run, cli, tmp_path, damage):
    """load_run opens no object of a bucket: the range's task that fetches one checks it, and the command
    ends in one line naming it, what is wrong and the repair, exit 1, with no mart committed and no warehouse."""
    in_bucket, _ = bucket_run
    copy = _copy_of(in_bucket)
    run_id = in_bucket.record.run_id
    if damage == "contract":
        damaged, wrong = _break_contract(copy, run_id), "column 'net_tie' is missing"
    else:
        damaged, wrong = copy.fs_path(in_bucket.record.files_of("shoes")[0].path), "data file missing"
        copy.filesystem.delete_file(damaged)
    for master in ([], ["--master", "local[2]"]):
        status, out, err = cli("marts", "--out", copy, "--run-id", run_id, *master, "--warehouse", tmp_path / "w.duckdb")
        assert (status, out) == (1, ""), err
        assert len(err.strip().splitlines()) == 1 and wrong in err and f"s3://{damaged}" in err, err
        assert "; repair: baccarat simulate " in err and f"--out {copy.uri} " in err, err
        assert not [table for table in copy.tables() if table.startswith("marts")]
        assert not (tmp_path / "w.duckdb").exists()


def test_one_process_held_a_whole_local_run_in_one_range(bucket_run, cli, tmp_path, monkeypatch):
    """Without --master, a run is built by ranges of at most SHOES_PER_RANGE shoes, in a bucket (their
    files are fetched while the range before runs) and on a local folder alike: one range of a
    10,000,000-shoe run took Polars 14 GB (benchmarks/marts_bench.py)."""
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
    assert set(planned) == {(False, 3), (True, 3)}  # 60 shoes: the marts and the composition marts alike


def test_the_marts_ask_nothing_of_the_tables_no_run_has_made(bucket_run, cli, s3_log, tmp_path):
    """The run has no sessions rows, so no system mart table exists: one listing of the marts' folder
    tells them apart, where looking for each table's log was a request at each step (the checks, the
    commits and the warehouse), a listing each on an object store."""
    in_bucket, _ = bucket_run
    copy = _copy_of(in_bucket)
    absent = [contract(name).table for name in SYSTEM_MARTS]
    assert not copy.possible_tables(absent)
    served_before = len(s3_log.read_text().splitlines())
    status, _, err = cli("marts", "--out", copy, "--run-id", in_bucket.record.run_id,
                         "--warehouse", tmp_path / "w.duckdb")
    assert status == 0, err
    served = s3_log.read_text().splitlines()[served_before:]
    assert not [line for line in served if any(f"/{table}/" in line for table in absent)]
    assert set(copy.possible_tables([contract(name).table for name in MARTS])) == \
        {contract(name).table for name in MARTS}
