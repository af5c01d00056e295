"""Apache Airflow for real: orchestration/airflow/baccarat_daily.py in Airflow 3 installed in a venv of its
own (SQLite metadata, AIRFLOW_HOME, logs and the venv all under the test's folder), this package installed
into it as a deployment would, `airflow dags test` of logical dates against a standalone Spark cluster on
127.0.0.1 writing to the local S3 server."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_cluster import cluster  # noqa: F401 (the standalone cluster fixture)
from test_superset import copy_of_the_package, pip_cache

pytestmark = pytest.mark.slow

REPOSITORY = Path(__file__).resolve().parents[1]
AIRFLOW = ["apache-airflow==3.3.2", "apache-airflow-providers-apache-spark==6.3.4"]
DAG_ID = "baccarat_daily"
SHOES = 300
FIRST, SECOND = "2026-03-01", "2026-03-02"

# The test seam: jobs/simulate.py as the deployment's repository holds it, except that the first attempt
# of the driver dies once every task has written its files, before the first commit.
FAIL_ONCE = '''\
import os, runpy, subprocess, sys
from pathlib import Path
from pipeline.storage import Store

ATTEMPTS, REAL = Path({attempts!r}), {real!r}
ATTEMPTS.write_text(ATTEMPTS.read_text() + "x" if ATTEMPTS.exists() else "x")
out = sys.argv[sys.argv.index("--out") + 1]
if len(ATTEMPTS.read_text()) == 1:
    Store.commit_partition = lambda *arguments, **keywords: os._exit(3)
else:  # what the retry finds before it starts: the runs committed, and the first attempt's files
    runs = subprocess.run([sys.executable, "-m", "pipeline.cli", "runs", "--out", out, "--json"],
                          capture_output=True, text=True)
    files = Store.parse(out).filesystem().get_file_info(__import__("pyarrow.fs").fs.FileSelector(
        Store.parse(out).fs_path("rounds"), recursive=True, allow_not_found=True))
    Path({seen!r}).write_text(json.dumps({{"runs": runs.stdout, "status": runs.returncode,
        "parquet": [f.path for f in files if f.path.endswith(".parquet")]}}))
sys.argv[0] = REAL
runpy.run_path(REAL, run_name="__main__")
'''.replace("import os,", "import json, os,")


def clean_environment() -> dict:
    return {key: value for key, value in os.environ.items()
            if key not in ("PYTHONPATH", "VIRTUAL_ENV") and not key.startswith("AIRFLOW")}


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """Airflow and its Spark provider, pinned, and this package (not editable, built from a copy so that
    the repository gets no build/); pip's own wheel cache makes a second install download nothing."""
    root = tmp_path_factory.mktemp("airflow-venv")
    subprocess.run([sys.executable, "-m", "venv", root / "venv"], check=True)
    pip = [str(root / "venv" / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    env = clean_environment() | {"PIP_CACHE_DIR": pip_cache(), "PIP_COMPILE": "false"}
    installed = subprocess.run([*pip, *AIRFLOW, str(copy_of_the_package(root / "package"))],
                               env=env, capture_output=True, text=True, timeout=3600)
    assert installed.returncode == 0, installed.stderr[-3000:]
    return root / "venv"


@pytest.fixture(scope="module")
def deployment(venv, cluster, s3_endpoint, tmp_path_factory):  # noqa: F811
    """A repository checkout as the Airflow workers see it (jobs/ and conf/spark/, simulate.py behind the
    seam), and a function running `airflow ...` with AIRFLOW_HOME, the SQLite database, the logs, the
    Variables and the Spark connection of this test; returns (run, home)."""
    home = tmp_path_factory.mktemp("airflow-home")
    checkout = home / "repository"
    (checkout / "jobs").mkdir(parents=True)
    shutil.copytree(REPOSITORY / "conf" / "spark", checkout / "conf" / "spark")
    shutil.copy(REPOSITORY / "jobs" / "composition.py", checkout / "jobs")
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


def dag_test(airflow, day: str, out: str, **params) -> subprocess.CompletedProcess:
    return airflow("dags", "test", DAG_ID, day, *(["-c", json.dumps(params)] if params else []), out=out)


def runs(cli, out: str) -> dict[str, dict]:
    status, printed, err = cli("runs", "--out", out, "--json")
    assert status == 0, err
    return {run["run_id"]: run for run in map(json.loads, printed.splitlines())}


def test_the_dag_imports_without_errors(deployment):
    airflow, _ = deployment
    listed = airflow("dags", "list-import-errors", "-o", "json")
    assert listed.returncode == 0, listed.stderr[-3000:]
    assert json.loads(listed.stdout or "[]") == [], listed.stdout
    dags = airflow("dags", "list", "-o", "json")
    assert DAG_ID in [dag["dag_id"] for dag in json.loads(dags.stdout)], dags.stdout + dags.stderr[-2000:]


def test_two_days_give_two_runs_a_rerun_commits_nothing_and_a_failed_attempt_is_retried_to_the_same_rows(
        deployment, bucket, cli):
    airflow, home = deployment
    (home / "attempts").write_text("xx")  # the seam: these days' first attempts do not fail
    for day in (FIRST, SECOND):
        done = dag_test(airflow, day, bucket, shoes=SHOES)
        assert done.returncode == 0 and "state=success" in done.stdout + done.stderr, done.stderr[-5000:]
    committed = runs(cli, bucket)
    assert sorted(committed) == [f"punto_banco-{FIRST}", f"punto_banco-{SECOND}"]
    assert committed[f"punto_banco-{FIRST}"]["seed"] == 20260301 and committed[f"punto_banco-{FIRST}"]["shoes"] == SHOES
    assert (home / "report" / "index.html").is_file()

    again = dag_test(airflow, FIRST, bucket, shoes=SHOES)
    assert again.returncode == 0, again.stderr[-5000:]
    assert runs(cli, bucket) == committed  # the same runs, at the same Delta versions: no new commit
    assert "nothing to do" in again.stdout + again.stderr

    (home / "attempts").unlink()
    retried = str(bucket).replace("/data", "/retried")
    failed_once = dag_test(airflow, FIRST, retried, shoes=SHOES)
    assert failed_once.returncode == 0, failed_once.stderr[-5000:]
    assert (home / "attempts").read_text() == "xx"  # one failed attempt, one retry
    seen = json.loads((home / "seen.json").read_text())
    assert seen["status"] == 0 and seen["runs"] == "" and seen["parquet"], seen  # written, nothing visible
    assert files_of(retried, f"punto_banco-{FIRST}") == files_of(bucket, f"punto_banco-{FIRST}")


def files_of(out: str, run_id: str) -> list[tuple[str, str]]:
    from pipeline.runs import read_run
    from pipeline.storage import Store

    return sorted((f["table"], f["sha256"]) for f in read_run(Store.parse(out), run_id)["files"])


@pytest.mark.parametrize(("params", "message"), [
    ({"shoes": 0}, "shoes"),
    ({"rules": "no_such_rules"}, "no_such_rules"),
])
def test_a_bad_param_fails_the_first_task_with_the_cli_s_one_line_message(deployment, bucket, params, message):
    airflow, home = deployment
    (home / "attempts").write_text("xx")
    done = dag_test(airflow, FIRST, bucket, shoes=SHOES, **params)
    log = "\n".join(path.read_text() for path in (home / "logs").rglob("task_id=simulate/**/*.log"))
    assert done.returncode != 0 or "state=failed" in done.stdout + done.stderr
    assert message in log, log[-3000:]
