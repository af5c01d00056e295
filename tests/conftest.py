import uuid
from pathlib import Path

import polars as pl
import pytest
import yaml
from local_s3 import aws_environment, s3_server

from pipeline.cli import main, spark_session
from pipeline.config_files import resource
from pipeline.jobs import already_committed, run_job
from pipeline.runs import read_run, run_files
from pipeline.simulate import job
from pipeline.simulate.decisions import strategy_pair
from pipeline.storage import Store
from pipeline.tables import load_rule_set


@pytest.fixture(scope="session")
def s3_endpoint(tmp_path_factory):
    """A local S3 server for the whole session; the standard AWS variables point at it, set before
    Spark starts so that its Python workers (and a test cluster's) inherit them."""
    with s3_server(tmp_path_factory.mktemp("s3") / "moto.log") as endpoint, aws_environment(endpoint):
        yield endpoint


@pytest.fixture
def bucket(s3_endpoint) -> str:
    """A new, empty bucket; returns the URI of a prefix in it."""
    import boto3

    name = f"test-{uuid.uuid4().hex[:16]}"
    boto3.client("s3", endpoint_url=s3_endpoint).create_bucket(Bucket=name)
    return f"s3://{name}/data"


@pytest.fixture(params=["local", "s3"])
def store_uri(request, tmp_path) -> str:
    """An empty output location on each store: a local folder, and a prefix in a new bucket."""
    return str(tmp_path / "data") if request.param == "local" else request.getfixturevalue("bucket")


@pytest.fixture(scope="session", autouse=True)
def spark_logs(tmp_path_factory):
    """Spark's log files, of the suite's session and of every `baccarat` it starts, in a folder of the
    suite's (never the user's ~/.local/state)."""
    folder = tmp_path_factory.mktemp("spark-logs")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BACCARAT_LOG_DIR", str(folder))
        patch.delenv("BACCARAT_SPARK_LOG_LEVEL", raising=False)
        yield folder


@pytest.fixture(scope="session")
def spark(s3_endpoint):
    """The one SparkSession of the suite: local[2], UI off."""
    session = spark_session("local[2]", "baccarat-tests")
    yield session
    session.stop()


def simulate(spark, out: Path | str, rules: str = "punto_banco", seed: int = 7, shoes: int = 200,
             partitions: int = 3, run_id: str | None = None, player_strategy: str | None = None,
             banker_strategy: str | None = None) -> dict:
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
    paths = [store.reader_path(f["path"]) for f in run_files(read_run(store, run_id), table)]
    return pl.concat([pl.read_parquet(p, hive_partitioning=False, storage_options=store.polars_options())
                      for p in paths])


@pytest.fixture
def cli(capsys, spark):
    """Run `baccarat ARGS...` in process; returns (exit status, stdout, stderr). A command that starts
    Spark gets the suite's session, whatever test runs first (its Python workers see the S3 variables)."""

    def run(*args: str):
        status = main([str(arg) for arg in args])
        captured = capsys.readouterr()
        return status, captured.out, captured.err

    return run


@pytest.fixture
def rules_file(tmp_path):
    """Write a variant of a shipped rule set to tmp_path; `changes` are merged in, None deletes a key."""

    def write(changes: dict, base: str = "punto_banco"):
        document = yaml.safe_load(resource("conf", "rules", f"{base}.yaml").read_text())
        for key, value in changes.items():
            if value is None:
                document.pop(key)
            else:
                document[key] = value
        path = tmp_path / "rules.yaml"
        path.write_text(yaml.safe_dump(document))
        return path

    return write
