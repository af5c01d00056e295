"""Apache Airflow for real: orchestration/airflow/baccarat_daily.py in Airflow 3 installed in a venv of its
own (kept in the user's cache folder by tests/functional/venv_cache.py; SQLite metadata, AIRFLOW_HOME and
the logs under the test's folder), this package installed into it as a deployment would, `airflow dags test` of logical dates against a standalone Spark cluster on
127.0.0.1 writing to the local S3 server."""

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from spark_jobs import simulate
from test_cluster import cluster  # noqa: F401 (the standalone cluster fixture)
from test_superset import copy_of_the_package, pip_cache
from venv_cache import cached_venv, package_dependencies

from pipeline.runs import read_run
from pipeline.storage import Store

pytestmark = pytest.mark.slow

REPOSITORY = Path(__file__).resolve().parents[2]
AIRFLOW = ["apache-airflow==3.3.2", "apache-airflow-providers-apache-spark==6.3.4"]
DAG_ID = "baccarat_daily"
SHOES = 300
FIRST, SECOND = "2026-03-01", "2026-03-02"

# The test seam: jobs/simulate.py as the deployment's repository holds it, except that the first attempt
# of the driver dies once every task has written its files, before the first commit.
FAIL_ONCE = '''\
import json, os, runpy, subprocess, sys
from pathlib import Path

from pyarrow.fs import FileSelector

from pipeline.storage import Store

attempts, real, seen = Path({attempts!r}), {real!r}, Path({seen!r})
attempts.write_text((attempts.read_text() if attempts.exists() else "") + "x")
out = sys.argv[sys.argv.index("--out") + 1]
if attempts.read_text() == "x":
    Store.commit_partition = lambda *arguments, **keywords: os._exit(3)
else:  # what a later attempt finds before it starts: the runs committed, and the files written
    runs = subprocess.run([sys.executable, "-m", "pipeline.cli", "runs", "--out", out, "--json"],
                          capture_output=True, text=True)
    try:  # a bad --out is the job's to refuse, in its one line
        store = Store.parse(out)
        files = store.filesystem.get_file_info(FileSelector(store.fs_path("rounds"), recursive=True,
                                                              allow_not_found=True))
    except Exception:
        files = []
    seen.write_text(json.dumps({{"runs": runs.stdout, "status": runs.returncode,
                                "parquet": [f.path for f in files if f.path.endswith(".parquet")]}}))
sys.argv[0] = real
runpy.run_path(real, run_name="__main__")
'''


def clean_environment() -> dict:
    return {key: value for key, value in os.environ.items()
            if key not in ("PYTHONPATH", "VIRTUAL_ENV") and not key.startswith("AIRFLOW")}


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Iterator[Path]:
    """Airflow and its Spark provider, pinned, in a venv kept between runs (tests/functional/venv_cache.py),
    and this package (not editable, built from a copy so that the repository gets no build/) installed
    afresh; pip's own wheel cache makes a first install download nothing when it is warm."""
    package = copy_of_the_package(tmp_path_factory.mktemp("airflow-package") / "package")
    env = clean_environment() | {"PIP_CACHE_DIR": pip_cache(), "PIP_COMPILE": "false"}
    with cached_venv("airflow", [*AIRFLOW, *package_dependencies()], package, env) as cached:
        yield cached


@pytest.fixture(scope="module")
def deployment(venv, cluster, s3_endpoint, tmp_path_factory):  # noqa: F811
    """A repository checkout as the Airflow workers see it (jobs/ and conf/spark/, simulate.py behind the
    seam), and a function running `airflow ...` with AIRFLOW_HOME, the SQLite database, the logs, the
    Variables and the Spark connection of this test; returns (run, home)."""
    home = tmp_path_factory.mktemp("airflow-home")
    checkout = home / "repository"
    (checkout / "jobs").mkdir(parents=True)
    shutil.copytree(REPOSITORY / "conf" / "spark", checkout / "conf" / "spark")
    for job in ("composition.py", "marts.py"):
        shutil.copy(REPOSITORY / "jobs" / job, checkout / "jobs")
    (checkout / "jobs" / "simulate.py").write_text(FAIL_ONCE.format(
        attempts=str(home / "attempts"), real=str(REPOSITORY / "jobs" / "simulate.py"), seen=str(home / "seen.json")))
    url = cluster[0]
    host, port = url.rsplit(":", 1)
    env = clean_environment() | {
        "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}", "PYSPARK_PYTHON": str(venv / "bin" / "python"),
        "AIRFLOW_HOME": str(home), "AIRFLOW__CORE__DAGS_FOLDER": str(REPOSITORY / "orchestration" / "airflow"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False", "AIRFLOW__CORE__DEFAULT_TASK_RETRY_DELAY": "1",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}",
        "AIRFLOW__LOGGING__BASE_LOG_FOLDER": str(home / "logs"),
        "AIRFLOW_CONN_BACCARAT_SPARK": json.dumps({"conn_type": "spark", "host": host, "port": int(port),
                                                   "extra": {"deploy-mode": "client"}}),
        "AIRFLOW_VAR_BACCARAT_SPARK_CONN_ID": "baccarat_spark",
        "AIRFLOW_VAR_BACCARAT_REPOSITORY": str(checkout),
        "AIRFLOW_VAR_BACCARAT_WAREHOUSE": str(home / "warehouse.duckdb"),
        "AIRFLOW_VAR_BACCARAT_REPORT_PAGE": str(home / "report" / "index.html"),
        "BACCARAT_LOG_DIR": str(home / "spark-logs"),
    }

    def airflow(*arguments: str, out: str | None = None) -> subprocess.CompletedProcess:
        variables = {"AIRFLOW_VAR_BACCARAT_OUT": out} if out else {}
        return subprocess.run([str(venv / "bin" / "airflow"), *arguments], env=env | variables, cwd=home,
                              capture_output=True, text=True, timeout=1800)

    migrated = airflow("db", "migrate")
    assert migrated.returncode == 0, migrated.stderr[-3000:]
    return airflow, home


def dag_test(airflow, day: str, out: str, **params) -> tuple[str, str]:
    """`airflow dags test` of one logical date; the DAG run's final state and everything it printed (the
    tasks' logs included)."""
    done = airflow("dags", "test", DAG_ID, day, *(["-c", json.dumps(params)] if params else []), out=out)
    printed = done.stdout + done.stderr
    finished = re.findall(r"DagRun Finished: .*? state=(\w+)", printed)
    assert finished, printed[-5000:]
    return finished[-1], printed


def last_line(done: subprocess.CompletedProcess) -> str:
    """A listing's JSON: Airflow prints its warnings (graphviz missing) on stdout before it."""
    return done.stdout.strip().splitlines()[-1]


def runs_in(listing: str) -> dict[str, dict]:
    """`baccarat runs --json`'s output by run id."""
    return {run["run_id"]: run for run in map(json.loads, listing.splitlines())}


def runs(cli, out: str) -> dict[str, dict]:
    status, printed, err = cli("runs", "--out", out, "--json")
    assert status == 0, err
    return runs_in(printed)


def files_of(out: str, run_id: str) -> list[tuple[str, str]]:
    return sorted((f.table, f.sha256) for f in read_run(Store.parse(out), run_id).files)


def test_the_dag_imports_without_errors_and_refuses_a_run_without_a_logical_date(deployment, venv):
    airflow, _ = deployment
    errors = airflow("dags", "list-import-errors", "--local", "-o", "json")  # parsed here, not read from the db
    assert errors.returncode == 0 and json.loads(last_line(errors)) == [], errors.stdout + errors.stderr[-3000:]
    dags = airflow("dags", "list", "--local", "-o", "json")
    assert [dag["dag_id"] for dag in json.loads(last_line(dags))] == [DAG_ID], dags.stdout + dags.stderr[-3000:]
    refused = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import types, baccarat_daily as d; "
         "d.daily_run_id(types.SimpleNamespace(logical_date=None), 'punto_banco')"],
        cwd=REPOSITORY / "orchestration" / "airflow", env=clean_environment(), capture_output=True, text=True)
    assert "AirflowFailException: baccarat_daily takes its run id and seed from the logical date, and this run " \
           "has none" in refused.stderr, refused.stderr[-3000:]


def test_two_days_give_two_runs_a_rerun_commits_nothing_and_a_failed_attempt_is_retried_to_the_same_rows(
        deployment, bucket, cli, spark, tmp_path):
    """The first day as a scheduler runs it, and run again; the second day's first attempt dies once every
    task has written its files: its retry commits the bytes the suite's own session deals from the same
    parameters (three DAG runs, each a spark-submit or two on the cluster: the suite's longest test)."""
    airflow, home = deployment
    (home / "attempts").write_text("xx")  # the seam: the first day's attempts do not fail
    state, printed = dag_test(airflow, FIRST, bucket, shoes=SHOES)
    assert state == "success", printed[-5000:]
    first = runs(cli, bucket)
    assert sorted(first) == [f"punto_banco-{FIRST}"]

    state, printed = dag_test(airflow, FIRST, bucket, shoes=SHOES)
    assert state == "success" and "nothing to do" in printed, printed[-5000:]
    assert runs(cli, bucket) == first  # the same run at the same Delta versions: no commit

    (home / "attempts").unlink()
    state, printed = dag_test(airflow, SECOND, bucket, shoes=SHOES)
    assert state == "success", printed[-5000:]
    assert (home / "attempts").read_text() == "xx"  # one failed attempt, then its retry
    seen = json.loads((home / "seen.json").read_text())
    assert seen["status"] == 0 and list(runs_in(seen["runs"])) == [f"punto_banco-{FIRST}"], seen
    assert any(f"punto_banco-{SECOND}" in path for path in seen["parquet"]), seen  # files written, no run
    committed = runs(cli, bucket)
    assert sorted(committed) == [f"punto_banco-{FIRST}", f"punto_banco-{SECOND}"]
    second = committed[f"punto_banco-{SECOND}"]
    assert [committed[f"punto_banco-{day}"]["seed"] for day in (FIRST, SECOND)] == [20260301, 20260302]
    assert {run["shoes"] for run in committed.values()} == {SHOES}
    assert f"punto_banco-{SECOND}" in (home / "report" / "index.html").read_text(encoding="utf-8")
    simulate(spark, tmp_path, seed=second["seed"], shoes=SHOES, partitions=second["partitions"],
             run_id=second["run_id"])
    assert files_of(bucket, second["run_id"]) == files_of(str(tmp_path), second["run_id"])


def test_a_bad_param_fails_the_first_task_at_once_with_the_cli_s_one_line_message(deployment, bucket):
    """The job's exit status 2 fails its task without a retry (SparkJob.execute); the CLI's other refusals
    (a rule set or an --out it cannot take) come the same way, and are the CLI tests' to check."""
    airflow, home = deployment
    (home / "attempts").write_text("xx")
    state, printed = dag_test(airflow, SECOND, bucket, shoes=0)
    assert state == "failed", printed[-5000:]
    assert "error: Invalid value for '--shoes': Input should be greater than or equal to 1" in printed, printed[-5000:]
    assert "simulate: bad input, the job's one line is above; not retried" in printed, printed[-5000:]
    assert "Spark-Submit cmd" in printed and printed.count("Spark-Submit cmd") == 1  # tried once
    assert "task_id=marts" not in printed


def test_a_trigger_with_a_rule_set_the_dag_cannot_play_is_refused_before_any_task(deployment, bucket):
    """Banque dealt, then failed at the marts task; the rules param's enum refuses it as the run starts."""
    airflow, _ = deployment
    done = airflow("dags", "test", DAG_ID, SECOND, "-c", json.dumps({"rules": "banque"}), out=bucket)
    printed = done.stdout + done.stderr
    assert done.returncode != 0 and "'banque' is not one of" in printed, printed[-5000:]
    assert "Spark-Submit cmd" not in printed
