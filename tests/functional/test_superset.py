"""Apache Superset for real: installed by the recipe of docs/serving.md in a folder of its own, with its
SQLite metadata database and a server on 127.0.0.1, it reads the warehouse through the documented URI
and extra, draws a chart from a dataset, SQL Lab can neither write a file nor read outside the data nor
run a function that acts, and a runaway query is stopped while the server goes on answering."""

import concurrent.futures
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from docs_blocks import superset_recipe
from spark_jobs import simulate
from superset_dashboard import chart_rows, charts, dashboards, draw_dashboard, import_bundle, render, same, spot_checks
from test_composition_marts import compose
from venv_cache import cached_venv

from pipeline.cli import main
from pipeline.storage import WAREHOUSE

pytestmark = pytest.mark.slow

REPOSITORY = Path(__file__).resolve().parents[2]
RECIPE_ADDRESS = "127.0.0.1:8088"
EXTRA = {"engine_params": {"connect_args": {"read_only": True}}}
RECIPE_VENV = 'python3 -m venv "$SUPERSET_HOME/venv"'
START_TIMEOUT = 1200  # seconds: Superset's first start took 8 minutes on two cores under a load of 18
OLDEST_READER = "1.0.0"  # the README: DuckDB 1.0 and later open the warehouse


def pip_cache() -> str:
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return os.environ.get("PIP_CACHE_DIR") or str(Path(cache, "pip"))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def copy_of_the_package(target: Path) -> Path:
    """What `pip install .` builds from, outside the repository, so the build writes only there: as a
    checkout holds it, pipeline/conf, schemas_data and bi_superset links to the folders copied beside it."""
    target.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPOSITORY / name, target)
    for name in ("pipeline", "conf", "schemas", "bi"):
        shutil.copytree(REPOSITORY / name, target / name, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def wait_until_up(base: str, server: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"the README's Superset recipe stopped with status {server.returncode}:\n"
                        + "\n".join(log.read_text().splitlines()[-30:]))
        try:
            if requests.get(f"{base}/health", timeout=2).status_code == 200:
                return
        except requests.RequestException:  # not listening yet, or a worker still starting
            pass
        time.sleep(2)
    pytest.fail(f"Superset did not answer within {START_TIMEOUT} s; the end of its log:\n"
                + "\n".join(log.read_text().splitlines()[-30:]))


@pytest.fixture(scope="module")
def data(spark, tmp_path_factory):
    """A run with its marts, and round_ev rows for its first shoes, so advantage_by_depth has rows."""
    out = tmp_path_factory.mktemp("data")
    simulate(spark, out, seed=9, shoes=20, run_id="superset")
    compose(spark, out, "superset", shoes=2)
    assert main(["marts", "--out", str(out)]) == 0
    return out


def superset_requirements(script: str) -> list[str]:
    """What the recipe's `pip install` of Superset puts in its venv, as the recipe spells it."""
    line = next(line for line in script.splitlines() if line.startswith("pip install") and "apache-superset" in line)
    return shlex.split(line, comments=True)[2:]


def recipe_environment(home: Path) -> dict:
    """The test's environment without its Python and Superset settings, HOME in the test's folder; pip
    keeps its own cache of wheels (so a second run downloads nothing) and compiles nothing ahead."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "VIRTUAL_ENV") and not key.startswith("SUPERSET_")}
    return env | {"HOME": str(home), "PIP_CACHE_DIR": pip_cache(), "PIP_COMPILE": "false"}


def stop(server: subprocess.Popen) -> None:
    os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()


@pytest.fixture(scope="module")
def superset(tmp_path_factory):
    """The recipe run as it is, from a copy of the repository, with HOME in the test's folder (the
    recipe's one folder goes there) and another free port; the server's address and the recipe's log
    (each command stamped with the time it started). The copy gains no file but the recipe's. The one
    change: the recipe's venv is a link to a venv with the same requirements kept between runs
    (tests/functional/venv_cache.py), so its `pip install` of Superset finds them all there."""
    root = tmp_path_factory.mktemp("superset")
    script = superset_recipe()
    assert script.count(RECIPE_ADDRESS) == 1 and script.count(RECIPE_VENV) == 1
    port = free_port()
    home = root / "home"
    home.mkdir()
    env = recipe_environment(home)
    log = root / "superset.log"
    package = copy_of_the_package(root / "baccarat-pipeline")
    before = sorted(package.rglob("*"))
    with cached_venv("superset", superset_requirements(script), None, env) as venv:
        linked = script.replace(RECIPE_VENV, f'ln -s {shlex.quote(str(venv))} "$SUPERSET_HOME/venv"')
        stamped = 'PS4="+ \\$(date +%T) "\n' + linked.replace(RECIPE_ADDRESS, f"127.0.0.1:{port}")
        with log.open("w") as output:
            server = subprocess.Popen(["bash", "-xeuo", "pipefail", "-c", stamped], cwd=package, env=env,
                                      stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            yield f"http://127.0.0.1:{port}", server, log, (package, before, home)
        finally:
            stop(server)


@pytest.fixture(scope="module")
def api(superset, data):
    """A REST session as the README's admin (a bearer token and a CSRF token), once the server
    answers; the data is simulated meanwhile."""
    base, server, log, _ = superset
    wait_until_up(base, server, log)
    session = requests.Session()
    login = session.post(f"{base}/api/v1/security/login", timeout=60,
                         json={"username": "admin", "password": "admin", "provider": "db", "refresh": False})
    assert login.status_code == 200, login.text
    session.headers["Authorization"] = f"Bearer {login.json()['access_token']}"
    csrf = session.get(f"{base}/api/v1/security/csrf_token/", timeout=60).json()["result"]
    session.headers.update({"X-CSRFToken": csrf, "Referer": base})
    session.base = base
    return session


def call(api, method: str, path: str, payload: dict | None = None) -> requests.Response:
    return api.request(method, f"{api.base}/api/v1/{path}", json=payload, timeout=120)


def add_database(api, name: str, uri: str, extra: dict) -> int:
    created = call(api, "POST", "database/", {"database_name": name, "sqlalchemy_uri": uri,
                                              "extra": json.dumps(extra), "expose_in_sqllab": True})
    assert created.status_code == 201, created.text
    return created.json()["id"]


@pytest.fixture(scope="module")
def warehouse_db(api, data):
    """The warehouse registered as the README says: its URI and extra."""
    return add_database(api, "baccarat", f"duckdb+baccarat:///{data / WAREHOUSE}", EXTRA)


def sql_lab(api, database: int, sql: str) -> requests.Response:
    return call(api, "POST", "sqllab/execute/", {"database_id": database, "sql": sql, "schema": "main",
                                                 "runAsync": False, "queryLimit": 100})


@pytest.fixture
def hand_made_dataset(api, warehouse_db):
    """bet_performance as a dataset made by hand, and removed afterwards with its charts: on the recipe's
    SQLite metadata a table name can be a dataset only once, and the dashboard's bundle has its own."""
    dataset = call(api, "POST", "dataset/",
                   {"database": warehouse_db, "schema": "main", "table_name": "bet_performance"})
    assert dataset.status_code == 201, dataset.text
    made = {"dataset": dataset.json()["id"], "charts": []}
    yield made
    for chart in made["charts"]:
        assert call(api, "DELETE", f"chart/{chart}").status_code == 200
    assert call(api, "DELETE", f"dataset/{made['dataset']}").status_code == 200


def test_a_dataset_and_a_chart_of_the_warehouse(api, hand_made_dataset):
    dataset_id = hand_made_dataset["dataset"]
    columns = [c["column_name"] for c in call(api, "GET", f"dataset/{dataset_id}").json()["result"]["columns"]]
    assert {"run_id", "bet", "total_net", "exact_ev"} <= set(columns)
    query = {"columns": ["bet", "total_net"], "row_limit": 100}
    chart = call(api, "POST", "chart/", {
        "slice_name": "net by bet", "viz_type": "table", "datasource_id": dataset_id, "datasource_type": "table",
        "params": json.dumps({"datasource": f"{dataset_id}__table", "viz_type": "table", "query_mode": "raw",
                              "all_columns": query["columns"], "row_limit": 100}),
        "query_context": json.dumps({"datasource": {"id": dataset_id, "type": "table"}, "queries": [query],
                                     "result_format": "json", "result_type": "full"}),
    })
    assert chart.status_code == 201, chart.text
    hand_made_dataset["charts"].append(chart.json()["id"])
    answer = call(api, "GET", f"chart/{chart.json()['id']}/data/")
    assert answer.status_code == 200, answer.text
    rows = answer.json()["result"][0]["data"]
    assert {row["bet"] for row in rows} == {"player", "banker", "tie", "player_pair", "banker_pair"}


@pytest.mark.parametrize("table", ["rounds", "shoes"])
def test_sql_lab_reads_the_views_over_the_runs_files(api, warehouse_db, table):
    answer = sql_lab(api, warehouse_db, f"SELECT count(DISTINCT shoe_id) AS shoes FROM {table}")
    assert answer.status_code == 200, answer.text
    assert answer.json()["data"] == [{"shoes": 20}]


@pytest.fixture
def outside(tmp_path) -> Path:
    """A file beside the data, not in it."""
    sentinel = tmp_path / "sentinel.csv"
    sentinel.write_text("secret\n42\n")
    return sentinel


@pytest.mark.parametrize(("sql", "message"), [
    ("COPY (SELECT 42) TO '{target}'", "COPY statements are refused"),
    ("COPY rounds TO '{target}' (FORMAT parquet)", "COPY statements are refused"),
    ("SELECT * FROM read_csv('{outside}')", "Permission Error"),
    ("SELECT * FROM read_text('{outside}')", "Permission Error"),
    ("SELECT * FROM read_text('/etc/hostname')", "Permission Error"),
    ("SELECT * FROM glob('{data}/*')", "Permission Error"),
    ("ATTACH '{target}' AS other", "ATTACH statements are refused"),
])
def test_sql_lab_writes_no_file_and_reads_nothing_outside_the_data(api, warehouse_db, data, outside, tmp_path, sql,
                                                                    message):
    target = tmp_path / "written"
    answer = sql_lab(api, warehouse_db, sql.format(target=target, outside=outside, data=data))
    assert answer.status_code >= 400 and message in answer.text, answer.text
    assert "secret" not in answer.text and not target.exists()


def test_without_the_dialect_the_same_sql_lab_writes_and_reads(api, data, outside, tmp_path):
    """The check above can fail: through duckdb-engine's own dialect, as the README once said, SQL Lab
    writes a file and reads one outside the data."""
    plain = add_database(api, "plain", f"duckdb:///{data / WAREHOUSE}", EXTRA)
    target = tmp_path / "written.csv"
    assert sql_lab(api, plain, f"COPY (SELECT 42 AS answer) TO '{target}'").status_code == 200
    assert target.read_text().split() == ["answer", "42"]
    assert "secret" in sql_lab(api, plain, f"SELECT * FROM read_text('{outside}')").text


def test_superset_reads_it_with_duckdb_1(api, warehouse_db):
    """`apache-superset[duckdb]` brings a DuckDB 1.x, which cannot open DuckDB 2.0's own storage format."""
    answer = sql_lab(api, warehouse_db, "SELECT version() AS version")
    assert answer.status_code == 200 and answer.json()["data"][0]["version"].startswith("v1."), answer.text


@pytest.fixture
def oldest_duckdb() -> Iterator[Path]:
    """A venv holding the oldest DuckDB the README names, kept between runs (tests/functional/venv_cache.py)."""
    env = os.environ | {"PIP_CACHE_DIR": pip_cache(), "PIP_COMPILE": "false"}
    with cached_venv("duckdb", [f"duckdb=={OLDEST_READER}"], None, env) as venv:
        yield venv


def test_the_oldest_duckdb_named_in_the_readme_reads_every_table(data, oldest_duckdb):
    count_every_table = (
        "import json, os, sys, duckdb\n"
        "con = duckdb.connect(sys.argv[1], read_only=True)\n"
        "con.execute(f\"SET file_search_path = '{os.path.dirname(sys.argv[1])}'\")\n"
        "names = [n for (n,) in con.execute('SELECT table_name FROM information_schema.tables').fetchall()]\n"
        "print(json.dumps({n: con.execute(f'SELECT count(*) FROM {n}').fetchone()[0] for n in names}))\n")
    old = subprocess.run([oldest_duckdb / "bin" / "python", "-c", count_every_table, str(data / WAREHOUSE)], check=True,
                         capture_output=True, text=True, timeout=120)
    new = subprocess.run([sys.executable, "-c", count_every_table, str(data / WAREHOUSE)], check=True,
                         capture_output=True, text=True, timeout=120)
    assert json.loads(old.stdout) == json.loads(new.stdout)
    assert {"rounds", "shoes", "bet_performance"} <= set(json.loads(old.stdout))


def test_an_extra_cannot_loosen_the_confinement(api, data):
    loosened = {"engine_params": {"connect_args": {"read_only": True, "config": {"enable_external_access": True}}}}
    tried = call(api, "POST", "database/test_connection/", {
        "database_name": "loosened", "sqlalchemy_uri": f"duckdb+baccarat:///{data / WAREHOUSE}",
        "extra": json.dumps(loosened)})
    assert tried.status_code >= 400 and "settings of its own" in tried.text, tried.text


def test_the_recipe_writes_only_under_its_one_folder(api, superset):
    package, before, home = superset[3]
    assert sorted(package.rglob("*")) == before  # no build/, no egg-info in the work tree
    assert list(home.rglob("superset.db")) == [home / "baccarat-superset" / "superset.db"]
    assert not (home / ".superset").exists()


@pytest.mark.parametrize("function", ["enable_logging(storage = 'file', storage_path = '{log}')", "disable_logging()",
                                      "enable_profiling()", "checkpoint()", "force_checkpoint()",
                                      "truncate_duckdb_logs()"])
def test_sql_lab_refuses_the_functions_that_act(api, warehouse_db, tmp_path, function):
    """On the DuckDB 1.5.6 Superset brings, enable_logging to a file aborted the whole server."""
    answer = sql_lab(api, warehouse_db, f"SELECT * FROM {function.format(log=tmp_path / 'log')}")
    assert answer.status_code >= 400 and "is refused" in answer.text, answer.text
    assert not (tmp_path / "log").exists()
    assert sql_lab(api, warehouse_db, "SELECT 42 AS answer").json()["data"] == [{"answer": 42}]


def test_a_runaway_query_is_stopped_and_the_server_goes_on(api, data):
    """The dialect's statement timeout (here tightened to 5 s by the URI) stops SQL Lab's query; meanwhile
    the other worker answers, and afterwards the same database answers again."""
    bounded = add_database(api, "bounded", f"duckdb+baccarat:///{data / WAREHOUSE}?timeout=5", EXTRA)
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        runaway = pool.submit(sql_lab, api, bounded, "SELECT count(*) AS n FROM range(1000000000000)")
        time.sleep(1)
        assert requests.get(f"{api.base}/health", timeout=10).status_code == 200
        answer = runaway.result(timeout=120)
    assert answer.status_code >= 400 and "stopped after 5 s" in answer.text, answer.text
    assert time.monotonic() - started < 60
    assert sql_lab(api, bounded, "SELECT 42 AS answer").json()["data"] == [{"answer": 42}]


@pytest.fixture(scope="module")
def dashboard(api, data, tmp_path_factory) -> tuple[list[int], dict]:
    """`baccarat bi superset-bundle` for the data's warehouse, imported through the API twice: the
    dashboards and their charts after the first import."""
    bundle = render(data / WAREHOUSE, tmp_path_factory.mktemp("bundle") / "bundle.zip")
    import_bundle(api, bundle)
    first = dashboards(api)
    first_charts = charts(api, first[0])
    import_bundle(api, bundle)
    return first, first_charts


def test_importing_the_bundle_again_overwrites_the_dashboard(api, dashboard):
    first, first_charts = dashboard
    assert len(first) == 1 and dashboards(api) == first
    again = charts(api, first[0])
    assert again == first_charts and len(again) == 8
    assert {chart["table"] for chart in again.values()} >= {"bet_performance", "outcome_summary", "streaks",
                                                            "payout_variance", "ev_convergence", "road_patterns",
                                                            "advantage_by_depth"}


def test_every_chart_answers_with_the_warehouse_s_figures(api, dashboard, data):
    """The chart-data API runs each chart's saved query; its first and last rows are the warehouse's."""
    (board,), _ = dashboard
    for chart_id, chart in charts(api, board).items():
        rows = chart_rows(api, chart_id)
        assert rows, chart["title"]
        for row in (rows[0], rows[-1]):
            checks = spot_checks(data / WAREHOUSE, chart["table"], chart["query"], row)
            assert checks and all(same(answered, stored) for answered, stored in checks), (chart["title"], checks)


def test_the_dashboard_draws_every_chart_in_a_browser(superset, dashboard, tmp_path):
    """Logged in as the admin, headless Chromium opens the dashboard: every chart holder draws (an ECharts
    canvas, the table, the big number) and no error shows. The screenshot stays in tmp_path."""
    (board,), _ = dashboard
    state, screenshot = draw_dashboard(superset[0], board, tmp_path)
    assert state["errors"] == [] and len(state["holders"]) == 8, state
    assert all(drawn for _, drawn in state["holders"]), state
    assert screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_moved_data_folder_is_read_through_the_rendered_uri(api, dashboard, data, tmp_path):
    """The data folder copied elsewhere, the bundle rendered for it and imported as assets (which replaces
    the database's URI): every chart reads the copy while the original is out of the way."""
    moved = tmp_path / "moved"
    shutil.copytree(data, moved, symlinks=True)
    import_bundle(api, render(moved / WAREHOUSE, tmp_path / "moved.zip"), endpoint="assets")
    (board,), _ = dashboard
    assert dashboards(api) == [board]
    aside = data.with_name(data.name + "-aside")
    data.rename(aside)
    try:
        for chart_id, chart in charts(api, board).items():
            assert chart_rows(api, chart_id), chart["title"]
    finally:
        aside.rename(data)
