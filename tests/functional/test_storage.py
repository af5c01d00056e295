"""Where tables live: local folders and object-store URIs, refused in one line before any work when
they are wrong; the old layout; `baccarat runs` and `baccarat vacuum`."""

import multiprocessing
import os
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import pyarrow as pa
import pytest
from spark_jobs import simulate, simulate_with_marts
from local_s3 import aws_environment, s3_server, silent_endpoint
from deltalake import DeltaTable

from pipeline.errors import BaccaratError
from pipeline.runs import read_run
from pipeline.storage import WAREHOUSE, Store


@pytest.mark.parametrize(("text", "message"), [
    ("s3:/x", "'s3:/x' is not a valid URI: write s3://BUCKET/PREFIX"),
    ("s3:x", "'s3:x' is not a valid URI"),
    ("s3://", "is not a valid URI"),
    ("ftp://host/data", "unknown scheme 'ftp:'"),
    ("http://127.0.0.1/data", "unknown scheme 'http:'"),
    ("s3://Not_A_Bucket/x", "'Not_A_Bucket' is not a valid bucket name"),
    ("s3://bucket/a//b", "may not hold empty, '.' or '..' parts"),
    ("s3://bucket/../up", "may not hold empty, '.' or '..' parts"),
    ("s3://bucket/x?versionId=1", "'?' or '#'"),
    ("", "empty"),
])
def test_a_location_that_only_looks_like_a_uri_is_refused(text, message):
    with pytest.raises(BaccaratError, match=None) as error:
        Store.parse(text)
    assert message in str(error.value) and "\n" not in str(error.value)


@pytest.mark.parametrize(("text", "uri"), [
    ("s3://bucket/prefix/", "s3://bucket/prefix"),
    ("S3://bucket", "s3://bucket"),
    ("./s3:x", None),  # a local folder of that name, written so
    ("file:///tmp/somewhere", "/tmp/somewhere"),
])
def test_locations_are_normalised(text, uri, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert Store.parse(text).uri == (uri or str(tmp_path / "s3:x"))


@pytest.mark.parametrize("command", [["simulate", "--shoes", "5", "--seed", "1"], ["marts"], ["runs"], ["vacuum"],
                                     ["verify"], ["report"], ["run", "--shoes", "5"]])
@pytest.mark.parametrize("out", ["s3:/x", "s3:x", "gopher://x/y"])
def test_every_command_refuses_a_bad_uri_in_one_line_and_writes_nothing(cli, tmp_path, monkeypatch, command, out):
    monkeypatch.chdir(tmp_path)
    status, stdout, err = cli(*command, "--out", out)
    assert status == 2 and stdout == "" and err.count("\n") == 1 and err.startswith("error: ")
    assert list(tmp_path.iterdir()) == []


def test_a_missing_bucket_is_refused_before_spark_starts(cli, s3_endpoint, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    started = time.monotonic()  # an unreachable master would take far longer than the bucket check
    status, out, err = cli("simulate", "--shoes", 5, "--seed", 1, "--out", "s3://no-such-bucket-here/data",
                           "--master", "spark://127.0.0.1:9")
    assert status == 2 and out == "" and err.count("\n") == 1
    assert "bucket 'no-such-bucket-here' does not exist" in err
    assert time.monotonic() - started < 10


def test_plain_http_needs_aws_allow_http(cli, bucket, monkeypatch):
    monkeypatch.delenv("AWS_ALLOW_HTTP")
    status, _, err = cli("runs", "--out", bucket)
    assert status == 2 and "set AWS_ALLOW_HTTP=true" in err and err.count("\n") == 1


@pytest.fixture(scope="module")
def warehouse(spark, tmp_path_factory) -> str:
    """A published warehouse (of a local run), which `report` opens before it reads OUT."""
    return str(simulate_with_marts(spark, tmp_path_factory.mktemp("warehouse"), shoes=10, partitions=1) / WAREHOUSE)


# Every command that reads or writes OUT's tables, besides `runs`: each checks OUT as `runs` does.
A_WAREHOUSE = "WAREHOUSE"  # given the warehouse fixture's path
OUT_COMMANDS = [["verify"], ["vacuum"], ["marts"], ["report", "--warehouse", A_WAREHOUSE],
                ["simulate", "--shoes", "5", "--seed", "1"], ["composition", "--run-id", "r1"],
                ["backtest", "--run-id", "r1", "--systems", "flat"], ["run", "--shoes", "5"]]


def given(command: list[str], warehouse: str) -> list[str]:
    return [warehouse if argument == A_WAREHOUSE else argument for argument in command]


@pytest.mark.parametrize("command", OUT_COMMANDS, ids=lambda command: command[0])
def test_every_command_refuses_a_missing_bucket_and_plain_http_as_runs_does(cli, bucket, warehouse, tmp_path,
                                                                           monkeypatch, command):
    """`report` read the runs table before checking OUT: a missing bucket was exit 1 and S3's raw 404, plain
    http without AWS_ALLOW_HTTP exit 1 and 'URL scheme is not allowed', where `runs` says each in one line."""
    monkeypatch.chdir(tmp_path)
    missing = bucket.replace("test-", "gone-")
    assert cli(*given(command, warehouse), "--out", missing) == runs_refusal(cli, missing)
    monkeypatch.delenv("AWS_ALLOW_HTTP")
    assert cli(*given(command, warehouse), "--out", bucket) == runs_refusal(cli, bucket)
    assert list(tmp_path.iterdir()) == []


def runs_refusal(cli, out: str) -> tuple[int, str, str]:
    refusal = cli("runs", "--out", out)
    assert refusal[0] == 2 and refusal[1] == "" and refusal[2].count("\n") == 1, refusal
    return refusal


def test_report_refuses_credentials_as_runs_does(cli, warehouse, tmp_path, monkeypatch):
    """`report` printed S3's raw 403 (`<?xml ...`) where `runs` names the refusal."""
    monkeypatch.chdir(tmp_path)
    with s3_server(tmp_path / "auth.log", INITIAL_NO_AUTH_ACTION_COUNT="0") as endpoint:
        monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
        monkeypatch.setenv("AWS_ALLOW_HTTP", "true")
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAUNKNOWNKEY000000")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wrong")
        refusal = cli("runs", "--out", "s3://guarded/data")
        assert refusal[0] == 1 and "ACCESS_DENIED" in refusal[2] and refusal[2].count("\n") == 1
        assert cli("report", "--warehouse", warehouse, "--out", "s3://guarded/data") == refusal


SILENT_BOUND = 30  # seconds for a command's end against a store that never answers (the bound is 10 s)


def test_an_endpoint_that_never_answers_ends_each_command_in_one_line_naming_it(warehouse, tmp_path):
    """An endpoint that takes connections and never answers kept `runs` 182 s, `simulate` 183 s and `report`
    121 s, each ending in curl's 'Timeout was reached': side by side, in processes of their own. `marts` then
    took 72 s to say the endpoint did not answer within 10 s (its runs' check ended at once, its marts' listing
    alongside did not)."""
    commands = [["runs"], ["report", "--warehouse", warehouse], ["simulate", "--shoes", "10", "--seed", "3"],
                ["marts", "--warehouse", tmp_path / "marts.duckdb"]]
    with silent_endpoint() as endpoint, aws_environment(endpoint):
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_GATEWAY_")}
        started = time.monotonic()
        running = [subprocess.Popen([sys.executable, "-m", "pipeline.cli", *command, "--out", "s3://bucket1/data"],
                                    env=env, cwd=tmp_path, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                   for command in commands]
        ended = [_ended(process, started + SILENT_BOUND) for process in running]
    line = f"error: s3://bucket1/data: the S3 endpoint {endpoint} did not answer within 10 s\n"
    assert ended == [(1, "", line)] * len(commands)


def _ended(process: subprocess.Popen, deadline: float) -> tuple[int, str, str]:
    try:
        out, err = process.communicate(timeout=max(deadline - time.monotonic(), 0))
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        pytest.fail(f"{' '.join(process.args[3:])} was still waiting after {SILENT_BOUND} s")
    return process.returncode, out, err


def test_refused_credentials_are_one_line_before_spark_starts(cli, tmp_path, monkeypatch):
    """A second S3 server that checks signatures, where no key is known: every request is refused."""
    with s3_server(tmp_path / "auth.log", INITIAL_NO_AUTH_ACTION_COUNT="0") as endpoint:
        monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
        monkeypatch.setenv("AWS_ALLOW_HTTP", "true")
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAUNKNOWNKEY000000")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wrong")
        started = time.monotonic()
        status, out, err = cli("simulate", "--shoes", 5, "--seed", 1, "--out", "s3://guarded/data",
                               "--master", "spark://127.0.0.1:9")
        assert status == 1 and out == "" and err.count("\n") == 1, err  # the store refused: exit 1
        assert "s3://guarded/data is not writable" in err and "ACCESS_DENIED" in err.upper().replace(" ", "_")
        assert time.monotonic() - started < 20


def test_a_folder_in_the_old_layout_is_refused_untouched(cli, tmp_path):
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / "old.json").write_text("{}")
    for command in (["simulate", "--shoes", "5", "--seed", "1"], ["marts"], ["runs"]):
        status, _, err = cli(*command, "--out", tmp_path)
        assert status == 2 and "old layout (manifests/" in err and err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["manifests", "old.json"]


def test_runs_lists_every_committed_run_with_its_versions(spark, cli, store_uri):
    first = simulate(spark, store_uri, seed=1, shoes=10, partitions=1, run_id="one")
    second = simulate(spark, store_uri, seed=2, shoes=12, partitions=2, run_id="two")
    status, out, err = cli("runs", "--out", store_uri, "--json")
    assert status == 0, err
    listed = [__import__("json").loads(line) for line in out.splitlines()]
    assert [r["run_id"] for r in listed] == ["one", "two"]
    assert [r["versions"] for r in listed] == [first.versions, second.versions]
    assert second.versions["rounds"] > first.versions["rounds"]
    assert [r["rounds"] for r in listed] == [first.rounds, second.rounds]
    assert list(listed[0]) == ["run_id", "rules", "seed", "shoes", "rounds", "decks", "bets", "outcomes", "partitions",
                               "software_version", "spark_master", "started_at", "ended_at", "versions", "marts"]
    assert (listed[0]["started_at"], listed[0]["outcomes"]) == (first.started_at.isoformat(), first.outcomes)
    status, out, _ = cli("runs", "--out", store_uri)
    assert status == 0 and "one" in out and "two" in out and f"{second.rounds:,}" in out


def test_vacuum_removes_what_no_commit_needs_and_keeps_every_run_readable(spark, cli, tmp_path):
    from pipeline.simulate import job
    from pipeline.rule_sets import load_rule_set

    out = tmp_path / "data"
    old = simulate(spark, out, seed=1, shoes=20, partitions=2, run_id="r")
    store = Store.parse(str(out))
    stray = job.Plan("never", load_rule_set(), 3, 10, store, 1)
    job.write_range(stray, 0, 10)  # an attempt that never committed
    assert cli("simulate", "--shoes", 25, "--seed", 2, "--out", out, "--run-id", "r", "--overwrite")[0] == 0
    new = read_run(store, "r")
    replaced = [out / f.path for f in old.files]
    never = sorted((out / "rounds" / "run_id=never").iterdir()) + sorted((out / "shoes" / "run_id=never").iterdir())
    everything = replaced + never
    assert all(p.is_file() for p in everything)
    status, stdout, _ = cli("vacuum", "--out", out)  # everything is younger than the 168-hour default
    assert status == 0 and all(p.is_file() for p in everything)
    week_ago = time.time() - 8 * 24 * 3600
    for path in everything + [out / f.path for f in new.files]:
        os.utime(path, (week_ago, week_ago))
    status, stdout, _ = cli("vacuum", "--out", out, "--dry-run")
    assert status == 0 and all(p.is_file() for p in everything) and "would remove" in stdout
    status, stdout, _ = cli("vacuum", "--out", out)
    assert status == 0 and not any(p.exists() for p in never), stdout
    # The old run's files were replaced just now: a reader of the version before may still read them
    # until the retention has passed since their removal (not since they were written).
    assert all(p.is_file() for p in replaced)
    assert all((out / f.path).is_file() for f in new.files)  # the committed run keeps its files
    assert cli("marts", "--out", out)[0] == 0
    assert DeltaTable(str(out / "rounds")).to_pyarrow_table().num_rows == new.rounds


def test_vacuum_refuses_a_retention_that_could_remove_a_running_jobs_files(cli, tmp_path):
    status, _, err = cli("vacuum", "--out", tmp_path, "--retention-hours", 1)
    assert status == 2 and "Invalid value for '--retention-hours'" in err


SCHEMA = pa.schema([pa.field("run_id", pa.string(), nullable=False), ("writer", pa.string())])


def commit_one_row(uri: str, run_id: str, writer: str, start) -> int:
    """In a process of its own: wait for the others, then commit one row as run `run_id`'s only file."""
    store = Store.parse(uri)
    rows = pa.table({"run_id": [run_id], "writer": [writer]}, schema=SCHEMA)
    start.wait()
    return store.write_and_commit("t", run_id, f"{writer}.parquet", rows, SCHEMA, (f"test:{run_id}", 1))


@pytest.mark.parametrize("same_run", [True, False])
def test_racing_commits_leave_one_copy_of_each_run(tmp_path, same_run):
    """Three processes commit at once into empty partitions, as the same run (one copy must remain:
    delta-rs alone lets two overwrites of an empty partition both land) or as three runs (all land). On
    a disk (the forced race below runs on both stores)."""
    store_uri = str(tmp_path / "data")
    context = multiprocessing.get_context("spawn")
    store = Store.parse(store_uri)
    with context.Manager() as manager, ProcessPoolExecutor(3, mp_context=context) as pool:
        for attempt in range(3):
            runs = [f"same{attempt}"] * 3 if same_run else [f"r{attempt}-{n}" for n in range(3)]
            writers = [f"w{attempt}-{n}" for n in range(3)]
            start = manager.Barrier(3)
            done = [pool.submit(commit_one_row, store_uri, run, writer, start) for run, writer in zip(runs, writers)]
            [future.result(timeout=120) for future in done]
            rows = store.read_rows("t", sorted(set(runs))).to_pylist()
            assert sorted(row["run_id"] for row in rows) == sorted(set(runs)), rows
            assert all(len(store.partition_files("t", run)) == 1 for run in set(runs))
            if not same_run:
                assert sorted(row["writer"] for row in rows) == writers


@pytest.mark.parametrize("racer_app", ["test", "another"])
def test_a_commit_that_read_the_table_before_a_racer_landed_leaves_one_copy(store_uri, monkeypatch, racer_app):
    """The race made to happen: our commit works on a snapshot read before a racing commit of the same run
    filled its (empty) partition. With the same application transaction id, delta-rs sees the conflict
    and the commit is made again; with another, delta-rs lets both overwrites land, and ours then
    replaces both."""
    store = Store.parse(store_uri)
    row = pa.table({"run_id": ["p"], "writer": ["x"]}, schema=SCHEMA)
    store.write_and_commit("t", "other", "other.parquet", row, SCHEMA, ("test", 1))  # the table exists
    stale = store.delta_table("t")
    store.write_and_commit("t", "p", "racer.parquet", row, SCHEMA, (racer_app, 1))
    opened = [stale]
    fresh = Store._open_or_create
    monkeypatch.setattr(Store, "_open_or_create",
                        lambda self, table, schema: opened.pop() if opened else fresh(self, table, schema))
    store.write_and_commit("t", "p", "ours.parquet", row, SCHEMA, ("test", 2))
    assert not opened  # the stale snapshot was used
    assert [f["path"] for f in store.partition_files("t", "p")] == ["t/run_id=p/ours.parquet"]
    assert store.read_rows("t", ["p"]).num_rows == 1


FIFO_TIMEOUT = 120  # seconds: a command blocked on the FIFO fails the test instead of hanging it


def regular_files(folder):
    return {p: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(("entry", "commands"), [
    # deltalake reads _last_checkpoint first, and would wait on a FIFO there forever
    ("runs/_delta_log/_last_checkpoint", ["simulate", "marts", "runs", "report", "vacuum"]),
    # the next commit of rounds, opened by simulate only when it commits, after the Spark job
    ("rounds/_delta_log/00000000000000000002.json", ["simulate", "marts", "vacuum"]),
])
def test_a_fifo_in_a_tables_log_is_one_line_naming_it_for_every_command_that_reads_the_table(
        spark, cli, tmp_path, entry, commands):
    out = tmp_path / "data"
    simulate(spark, out, seed=1, shoes=10, partitions=1, run_id="f")
    assert cli("marts", "--out", out)[0] == 0
    os.mkfifo(out / entry)
    before = regular_files(out)
    arguments = {"simulate": ["--shoes", "10", "--seed", "2", "--run-id", "g"]}
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_GATEWAY_")}
    started = {command: subprocess.Popen([sys.executable, "-m", "pipeline.cli", command, "--out", str(out),
                                          *arguments.get(command, [])], env=env, text=True,
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
               for command in commands}
    for command, process in started.items():
        try:
            _, err = process.communicate(timeout=FIFO_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            pytest.fail(f"baccarat {command} blocked on the FIFO {entry}")
        assert process.returncode == 2, (command, err)
        assert err == f"error: {out / entry} is not a regular file (a FIFO, a socket, a device or a broken link): " \
                      f"the log of table {entry.split('/')[0]!r} may hold only files; move it away\n", (command, err)
    assert regular_files(out) == before
