"""Fixtures of the functional tier: the suite's one SparkContext and the local S3 server; spark_jobs.py
holds the helpers that run jobs through them."""

import inspect
import uuid
from pathlib import Path

import pytest
from local_s3 import aws_environment, s3_server

from pipeline.spark import spark_context

# The modules that take longest, longest first: `--dist loadfile --no-loadscope-reorder` (pyproject.toml) hands
# the modules to the workers in this order, so that none of them starts when the other workers are nearly done.
# The servers' modules lead the whole suite; the others lead the not-slow tier, both tiers' in one list.
LONGEST_FIRST = ("test_airflow.py", "test_faults.py", "test_superset.py", "test_exit_codes.py",
                 "test_marts_cluster.py", "test_cluster.py",
                 "test_backtest.py", "test_marts.py", "test_banque.py", "test_serving.py", "test_marts_bounded.py",
                 "test_banque_simulate.py", "test_repair.py", "test_simulate_cli.py", "test_storage.py",
                 "test_report.py", "test_roads_parity.py", "test_games.py", "test_user_files.py",
                 "test_cdf_simulate.py", "test_sql.py")


def on_the_s3_server(item) -> bool:
    """A test that uses the local S3 server: it, or a fixture it uses, asks for the endpoint or a bucket,
    or it runs on the s3 store."""
    asking = {name for name, definitions in item._fixtureinfo.name2fixturedefs.items()
              if {"s3_endpoint", "s3_log", "bucket"} & set(definitions[-1].argnames)}
    if hasattr(item, "function"):
        asking |= {"s3_endpoint", "s3_log", "bucket"} & set(inspect.signature(item.function).parameters)
    store = getattr(item, "callspec", None) and item.callspec.params.get("store_uri")
    return bool(asking) or store == "s3"


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(items):
    """The tests on the local S3 server are `slow`, as the other servers' are; the longest modules
    first, every module's tests kept together and in their order."""
    def rank(item) -> int:
        name = item.path.name
        return LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST)

    for item in items:
        if on_the_s3_server(item):
            item.add_marker(pytest.mark.slow)
    items.sort(key=rank)


@pytest.fixture(scope="session")
def s3_log(tmp_path_factory) -> Path:
    """The local S3 server's output: a line per request it served."""
    return tmp_path_factory.mktemp("s3") / "moto.log"


@pytest.fixture(scope="session")
def s3_endpoint(s3_log):
    """A local S3 server for the whole session; the standard AWS variables point at it, set before
    Spark starts so that its Python workers (and a test cluster's) inherit them."""
    with s3_server(s3_log) as endpoint, aws_environment(endpoint):
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


@pytest.fixture(scope="session")
def spark(request):
    """The suite's one SparkContext: local[2], UI off. When a test of the session uses the local S3
    server, the server starts first, so that Spark's Python workers inherit its variables; a session
    without such a test (`-m "not slow"`) starts no server."""
    if any(on_the_s3_server(item) for item in request.session.items):
        request.getfixturevalue("s3_endpoint")
    context = spark_context("local[2]", "baccarat-tests")
    yield context
    context.stop()


@pytest.fixture
def cli(cli, spark):
    """tests/conftest.py's `cli`, holding the suite's Spark session: a command that starts Spark gets
    it, whatever test runs first (its Python workers see the S3 variables)."""
    return cli
