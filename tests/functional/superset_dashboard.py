"""Checks of the dashboard `baccarat bi superset-bundle` renders, on a live Superset: importing the
bundle, comparing what the chart-data API answers with the warehouse, and what a browser draws."""

import json
import math
import re
import time
from pathlib import Path

import duckdb
import requests
from devtools import Browser

from pipeline.cli import main

TITLE = "Baccarat: runs"
DRAWN_WITHIN = 180  # seconds for every chart of the dashboard to draw
# A chart holder has drawn once its chart's area holds an ECharts canvas, a table or a big number.
DRAWINGS = ".slice_container canvas, .slice_container svg, .slice_container table, .slice_container .header-line"
STATE = f"""(() => {{
  const holders = [...document.querySelectorAll('.dashboard-component-chart-holder')];
  return {{holders: holders.map(h => [h.innerText.split('\\n')[0], h.querySelector('{DRAWINGS}') !== null]),
           loading: document.querySelectorAll('.loading').length,
           errors: [...document.querySelectorAll('.ant-alert-error, .alert-danger, [role=alert]')]
                   .map(e => e.innerText.trim())}};
}})()"""


def render(warehouse: Path, target: Path) -> Path:
    assert main(["bi", "superset-bundle", "--warehouse", str(warehouse), "-o", str(target)]) == 0
    return target


def import_bundle(api, bundle: Path, endpoint: str = "dashboard") -> None:
    """POST the zip to /api/v1/dashboard/import/ (overwrite=true) or /api/v1/assets/import/."""
    field = "formData" if endpoint == "dashboard" else "bundle"
    with bundle.open("rb") as zipped:
        answer = api.post(f"{api.base}/api/v1/{endpoint}/import/", timeout=300, data={"overwrite": "true"},
                          files={field: (bundle.name, zipped, "application/zip")})
    assert answer.status_code == 200, answer.text


def dashboards(api) -> list[int]:
    query = {"filters": [{"col": "dashboard_title", "opr": "eq", "value": TITLE}]}
    answer = api.get(f"{api.base}/api/v1/dashboard/", params={"q": json.dumps(query)}, timeout=60)
    return [found["id"] for found in answer.json()["result"]]


def charts(api, dashboard: int) -> dict[int, dict]:
    """The dashboard's charts by id: the saved query context and the dataset's table of each."""
    listed = api.get(f"{api.base}/api/v1/dashboard/{dashboard}/charts", timeout=60).json()["result"]
    found = {}
    for chart in listed:
        saved = api.get(f"{api.base}/api/v1/chart/{chart['id']}", timeout=60).json()["result"]
        found[chart["id"]] = {"title": saved["slice_name"], "uuid": saved["uuid"],
                              "query": json.loads(saved["query_context"])["queries"][0],
                              "table": saved["datasource_name_text"].removeprefix("main.")}
    return found


def chart_rows(api, chart: int) -> list[dict]:
    """The chart's rows as the chart-data API answers them, read afresh (force: no cached answer)."""
    answer = api.get(f"{api.base}/api/v1/chart/{chart}/data/", params={"force": "true"}, timeout=120)
    assert answer.status_code == 200, answer.text
    return answer.json()["result"][0]["data"]


def warehouse_value(warehouse: Path, table: str, expression: str, where: dict) -> object:
    """One value computed by DuckDB from the warehouse, opened read-only from its folder."""
    conditions = " AND ".join(f'"{column}" = ?' for column in where) or "true"
    with duckdb.connect(str(warehouse), read_only=True) as con:
        con.execute(f"SET file_search_path = '{warehouse.parent}'")
        return con.execute(f"SELECT {expression} FROM {table} WHERE {conditions}", list(where.values())).fetchone()[0]


def spot_checks(warehouse: Path, table: str, query: dict, row: dict) -> list[tuple[object, object]]:
    """(the API's value, the warehouse's) for every metric of one row of a chart's answer, or for every
    column of a raw table's row (found in the warehouse by its other columns)."""
    where = {f["col"]: f["val"] for f in query["filters"]}
    if not query["metrics"]:
        keys = {column: row[column] for column in query["columns"] if isinstance(row[column], str)}
        return [(row[c], warehouse_value(warehouse, table, f'"{c}"', where | keys)) for c in query["columns"]]
    where |= {column: row[column] for column in query["columns"]}
    return [(row[m["label"]], warehouse_value(warehouse, table, f'{m["aggregate"]}("{m["column"]["column_name"]}")',
                                              where)) for m in query["metrics"]]


def same(api_value, warehouse_value) -> bool:
    if isinstance(api_value, str) or api_value is None:
        return api_value == warehouse_value
    return math.isclose(float(api_value), float(warehouse_value), rel_tol=1e-9, abs_tol=1e-12)


def logged_in_cookies(base: str) -> list[dict]:
    """The session cookie of the README's admin, logged in through Superset's own login form."""
    session = requests.Session()
    form = session.get(f"{base}/login/", timeout=60).text
    token = re.search(r'name="csrf_token"\s+id="csrf_token"\s+value="([^"]+)"', form)[1]
    answer = session.post(f"{base}/login/", timeout=60,
                          data={"username": "admin", "password": "admin", "csrf_token": token})
    assert answer.status_code == 200 and not answer.url.rstrip("/").endswith("/login"), answer.url
    return [{"name": c.name, "value": c.value, "domain": "127.0.0.1", "path": "/"} for c in session.cookies]


def draw_dashboard(base: str, dashboard: int, folder: Path) -> tuple[dict, Path]:
    """Open the dashboard in headless Chromium, wait until every chart has drawn (or the time is up), and
    take a screenshot; the page's last state (see STATE) and the screenshot."""
    browser = Browser(folder / "profile", 1600, 2400)
    try:
        browser.open(f"{base}/superset/dashboard/{dashboard}/", logged_in_cookies(base))
        deadline = time.monotonic() + DRAWN_WITHIN
        while True:
            time.sleep(2)
            state = browser.evaluate(STATE)
            done = state["holders"] and all(drawn for _, drawn in state["holders"]) and not state["loading"]
            if done or state["errors"] or time.monotonic() > deadline:
                return state, browser.screenshot(folder / "dashboard.png")
    finally:
        browser.close()
