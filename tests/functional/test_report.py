"""The report: one self-contained HTML page per run, built from the published warehouse.

Unit tests read the page as text and call the chart functions; the browser tests open it in
Debian's Chromium (headless, no network) and check that every chart is drawn, that the page
logs nothing on the console, and read what it shows: the tick labels plotly drew, the key figures.
Chromium is required: without it those tests fail, they do not skip.
"""

import errno
import math
import re
import shlex
import subprocess
import time
from html.parser import HTMLParser
from pathlib import Path

import duckdb
import plotly.graph_objects as go
import polars as pl
import pytest
from devtools import FLAGS as CHROMIUM_FLAGS, chromium_binary
from spark_jobs import simulate
from plotly.offline import get_plotlyjs
from test_composition_marts import compose

from pipeline.cli import main
from pipeline.errors import BaccaratError
from pipeline.report import build_report
from pipeline.storage import Store
from pipeline.report.charts import (
    convergence_chart,
    ev_chart,
    outcome_chart,
    pattern_chart,
    payout_fan_chart,
    streak_chart,
)
from pipeline.report.composition import SHOWN_SHARE, depth_fan_chart, favourable_chart, trigger_chart
from pipeline.report.page import figure_div, rounds_to_tell_edge, too_small_to_tell
from pipeline.report.roads import roads_chart, with_rounds
from pipeline.report.style import HIGHLIGHT, number

CHARTS = {"outcomes", "ev", "payout", "convergence", "streaks", "patterns", "roads"}
COMPOSITION_CHARTS = {"depth_fan", "favourable", "triggers"}
RUN_ID = "report-s11-n400"
COMPOSITION_RUN = "report-composition"
TOO_SMALL = "sample too small to tell"


@pytest.fixture(scope="module")
def report(spark, tmp_path_factory) -> tuple[Path, Path]:
    """400 shoes (large enough to tell the Banker edge) simulated, the marts and warehouse published,
    the report built: (folder, page)."""
    folder = tmp_path_factory.mktemp("report")
    simulate(spark, folder, seed=11, shoes=400, partitions=2, run_id=RUN_ID)
    assert main(["marts", "--out", str(folder)]) == 0
    return folder, build_report(Store.parse(str(folder)))


@pytest.fixture(scope="module")
def page(report) -> str:
    return report[1].read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def composition_report(spark, tmp_path_factory) -> tuple[Path, Path]:
    """A run with round_ev rows (the composition job's, with the count systems ez_baccarat can use), its
    marts and its report: (folder, page)."""
    folder = tmp_path_factory.mktemp("composition_report")
    simulate(spark, folder, rules="ez_baccarat", seed=12, shoes=30, partitions=1, run_id=COMPOSITION_RUN)
    compose(spark, folder, COMPOSITION_RUN, shoes=30)
    assert main(["marts", "--out", str(folder)]) == 0
    return folder, build_report(Store.parse(str(folder)))


def mart(folder: Path, sql: str) -> pl.DataFrame:
    """A query through a plain read-only DuckDB, which searches the data folder for the views' relative
    paths as docs/serving.md tells other clients to."""
    with duckdb.connect(str(folder / "warehouse.duckdb"), read_only=True) as con:
        con.execute(f"SET file_search_path = '{folder}'")
        return con.sql(sql).pl()


# --- the page as a file --------------------------------------------------------------------------

def test_page_is_one_file_in_report_folder(report):
    folder, path = report
    assert path == folder / "report" / "index.html"
    assert [p.name for p in path.parent.iterdir()] == ["index.html"]  # no temporary file left behind
    assert path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_page_needs_no_network(page):
    # no script, stylesheet, image or frame loaded from anywhere: every src/href is local or absent
    assert not re.findall(r"""<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""",
                          page, flags=re.IGNORECASE)
    assert not re.findall(r"<script\b[^>]*\bsrc\s*=", page, flags=re.IGNORECASE)
    assert not re.findall(r"<link\b", page, flags=re.IGNORECASE)
    assert "@import" not in page


def test_page_inlines_plotly_js_exactly_once(page):
    assert len(re.findall(r"\* plotly\.js v\d+\.\d+\.\d+", page)) == 1
    scripts = re.findall(r"<script[^>]*>(.*?)</script>", page, flags=re.DOTALL)
    assert sum(len(s) > 1_000_000 for s in scripts) == 1


def test_page_has_every_chart_and_table(page):
    assert set(re.findall(r'class="chart[^"]*" data-chart="([a-z_]+)"', page)) == CHARTS
    assert 'id="composition"' not in page  # the run has no round_ev rows
    for key in CHARTS:
        assert len(re.findall(rf'data-chart="{key}"', page)) == 1
        assert f'id="plot-{key}"' in page  # the plotly div inside the container
    assert f"<title>Baccarat report: {RUN_ID}</title>" in page
    assert f"Baccarat run {RUN_ID}" in page and "punto_banco" in page
    assert page.count("<table") == 3  # outcomes, bets, run parameters
    for heading in ("Rounds won", "Simulated share", "Exact share", "Simulated EV", "Exact EV", "Exact house edge",
                    "Software version", "Partitions", "Seed"):
        assert f"<th>{heading}</th>" in page or f"<td>{heading}</td>" in page
    assert "The five roads of shoe 0" in page


def test_tables_show_the_marts_figures(report, page):
    folder, _ = report
    summary = mart(folder, f"SELECT * FROM outcome_summary WHERE run_id = '{RUN_ID}'")
    for row in summary.iter_rows(named=True):
        assert f"{row['count']:,}" in page
        assert f"{row['share'] * 100:.3f}\u00a0%" in page
    bets = mart(folder, f"SELECT * FROM bet_performance WHERE run_id = '{RUN_ID}'")
    for row in bets.iter_rows(named=True):
        assert f"{-row['exact_ev'] * 100:.3f}\u00a0%" in page  # exact house edge
    rounds = summary["rounds"][0]
    assert f"<td>{rounds:,}</td>" in page and "<td>400</td>" in page and "<td>11</td>" in page  # rounds, shoes, seed


def test_rebuilding_replaces_the_page(report):
    folder, path = report
    before = path.stat().st_ino
    assert build_report(Store.parse(str(folder)), RUN_ID) == path
    assert path.stat().st_ino != before  # a new file renamed over the old one
    assert [p.name for p in path.parent.iterdir()] == ["index.html"]


# --- choosing the run and the shoe; errors ----------------------------------------------------------

def test_default_run_is_the_newest_and_shoe_can_be_chosen(spark, tmp_path):
    simulate(spark, tmp_path, seed=1, shoes=12, partitions=1, run_id="zz-older")
    time.sleep(0.01)
    simulate(spark, tmp_path, seed=2, shoes=12, partitions=1, run_id="aa-newer")
    assert main(["marts", "--out", str(tmp_path)]) == 0
    assert "Baccarat run aa-newer" in build_report(Store.parse(str(tmp_path))).read_text(encoding="utf-8")
    page = build_report(Store.parse(str(tmp_path)), "zz-older", shoe_id=5).read_text(encoding="utf-8")
    assert "Baccarat run zz-older" in page and "The five roads of shoe 5" in page
    with pytest.raises(BaccaratError) as error:
        build_report(Store.parse(str(tmp_path)), "zz-older", shoe_id=12)
    assert "shoe 12" in str(error.value) and "\n" not in str(error.value)


def test_missing_warehouse_is_one_line_error(tmp_path):
    with pytest.raises(BaccaratError) as error:
        build_report(Store.parse(str(tmp_path)))
    message = str(error.value)
    assert "no warehouse" in message and str(tmp_path / "warehouse.duckdb") in message and "\n" not in message
    assert not (tmp_path / "report").exists()


def test_unknown_run_is_one_line_error(report):
    folder, _ = report
    with pytest.raises(BaccaratError) as error:
        build_report(Store.parse(str(folder)), "no-such-run")
    message = str(error.value)
    assert "'no-such-run'" in message and RUN_ID in message and "\n" not in message



def test_report_of_a_committed_run_the_warehouse_lacks_names_the_build_or_refuses_banque(cli, spark, tmp_path):
    """A run committed after the marts, or a banque run (which has none), was 'not in the warehouse; it holds:
    ...' with no way on: the one names the `marts` that builds it (a command that works as given, here from a
    folder with a space), the other is refused as composition and backtest refuse it."""
    out = tmp_path / "a folder"
    simulate(spark, out, seed=1, shoes=12, partitions=1, run_id="built")
    assert main(["marts", "--out", str(out)]) == 0
    simulate(spark, out, seed=2, shoes=12, partitions=1, run_id="later")
    assert cli("simulate", "--rules", "banque", "--shoes", 20, "--seed", 3, "--out", out)[0] == 0
    status, _, err = cli("report", "--run-id", "banque-s3-n20", "--out", out)
    assert status == 2 and err.count("\n") == 1 and "is a baccarat banque run" in err and "report" in err
    status, _, err = cli("report", "--run-id", "later", "--out", out)
    assert status == 2 and err.count("\n") == 1 and "has no marts yet" in err
    build = shlex.split(err.split("`")[1])
    assert build[:2] == ["baccarat", "marts"] and main(build[1:]) == 0
    assert cli("report", "--run-id", "later", "--out", out)[0] == 0

# --- the chart functions (pure: marts in, figure out) ------------------------------------------------

def test_outcome_intervals_use_the_exact_share(report):
    folder, _ = report
    summary = mart(folder, f"SELECT * FROM outcome_summary WHERE run_id = '{RUN_ID}'")
    fig = outcome_chart(summary)
    points = [t for t in fig.data if t.error_y.array is not None]
    assert len(points) == 3
    for trace in points:
        row = summary.filter(pl.col("outcome") == trace.x[0][0]).row(0, named=True)
        p0 = row["exact_share"]
        assert trace.y[0] == pytest.approx(row["share"])
        assert trace.error_y.array[0] == pytest.approx(1.96 * math.sqrt(p0 * (1 - p0) / row["rounds"]))
        assert trace.marker.color == {"B": "#d62728", "P": "#1f77b4", "T": "#2ca02c"}[row["outcome"]]


def test_ev_chart_intervals_and_exact(report):
    folder, _ = report
    bets = mart(folder, f"SELECT * FROM bet_performance WHERE run_id = '{RUN_ID}'")
    fig = ev_chart(bets)
    for row in bets.iter_rows(named=True):
        trace = next(t for t in fig.data if t.error_x.array is not None and t.x[0] == row["ev"])
        assert trace.error_x.array[0] == pytest.approx(row["ev_ci_high"] - row["ev"])
        assert trace.error_x.arrayminus[0] == pytest.approx(row["ev"] - row["ev_ci_low"])
    exact = next(t for t in fig.data if t.name == "exact EV")
    assert list(exact.x) == pytest.approx(bets["exact_ev"].to_list())


def test_payout_fan_horizons_and_menu(report):
    folder, _ = report
    variance = mart(folder, f"SELECT * FROM payout_variance WHERE run_id = '{RUN_ID}'")
    summary = mart(folder, f"SELECT * FROM outcome_summary WHERE run_id = '{RUN_ID}'")
    per_shoe = summary["rounds"][0] / summary["shoes"][0]
    fig = payout_fan_chart(variance, per_shoe)
    bets = variance["bet"].unique().to_list()
    assert len(fig.data) == 6 * len(bets)
    shown = [t for t in fig.data if t.visible]
    assert len(shown) == 6 and shown[4].line.color == "#d62728"  # banker by default
    assert list(shown[0].x) == pytest.approx(sorted([1, per_shoe, 100, 1000]))
    assert fig.layout.xaxis.type == "log"
    banker = variance.filter(pl.col("bet") == "banker").with_columns(pl.col("p50").cast(pl.Float64))
    assert sorted(shown[4].y) == sorted(banker["p50"].to_list())
    assert {b.label for b in fig.layout.updatemenus[0].buttons} == {b.replace("_", " ").capitalize() for b in bets}


def test_convergence_streaks_and_patterns(report):
    folder, _ = report
    conv = mart(folder, f"SELECT * FROM ev_convergence WHERE run_id = '{RUN_ID}'")
    fig = convergence_chart(conv)
    assert fig.layout.xaxis.type == "log" and len([t for t in fig.data if t.visible]) == 4
    streaks = mart(folder, f"SELECT * FROM streaks WHERE run_id = '{RUN_ID}'")
    fig = streak_chart(streaks)
    assert fig.layout.yaxis.type == "log" and len(fig.data) == 6
    patterns = mart(folder, f"SELECT * FROM road_patterns WHERE run_id = '{RUN_ID}'")
    fig = pattern_chart(patterns)
    bars = fig.data[0]
    assert len(bars.marker.color) == patterns.height
    strong = sum(abs(z) > 2 for z in patterns["z_score"].to_list() if z is not None)
    assert sum(c == HIGHLIGHT for c in bars.marker.color) == strong
    interval = fig.data[1]
    p0 = patterns["p_unconditional"][0]
    most = patterns["observations"].max()
    assert min(interval.error_y.array) == pytest.approx(1.96 * math.sqrt(p0 * (1 - p0) / most))


def test_a_run_is_too_small_to_tell_until_every_edge_lies_outside_its_interval(report):
    folder, _ = report
    bets = mart(folder, f"SELECT * FROM bet_performance WHERE run_id = '{RUN_ID}'")
    for row in bets.iter_rows(named=True):
        needed = rounds_to_tell_edge(row)

        def half(rounds: int) -> float:
            return 1.96 * row["exact_sd"] / math.sqrt(rounds)

        assert half(needed) < -row["exact_ev"] <= half(needed - 1)  # the fewest rounds with a narrower interval
    needed, bet = max((rounds_to_tell_edge(row), row["bet"]) for row in bets.iter_rows(named=True))
    assert bet == "banker"  # the smallest edge for its spread
    assert too_small_to_tell(bets.with_columns(rounds=pl.lit(needed - 1))) == (needed, "banker")
    assert too_small_to_tell(bets.with_columns(rounds=pl.lit(needed))) is None
    assert too_small_to_tell(bets.with_columns(exact_ev=pl.lit(0.0), rounds=pl.lit(1))) is None  # no edge to tell
    player_edge = bets.with_columns(exact_ev=-pl.col("exact_ev"))  # a rule set paying the player an edge
    assert too_small_to_tell(player_edge.with_columns(rounds=pl.lit(needed - 1))) == (needed, "banker")
    assert bets["rounds"].min() >= needed  # the fixture is large enough: its page must say it matches


def test_roads_cells_carry_rounds_and_pairs(report):
    folder, _ = report
    cells = mart(folder, f"SELECT * FROM road_cells WHERE run_id = '{RUN_ID}' AND shoe_id = 0")
    rounds = mart(folder, f"SELECT round, outcome, player_pair, banker_pair FROM rounds "
                          f"WHERE run_id = '{RUN_ID}' AND shoe_id = 0 ORDER BY round")
    joined = with_rounds(cells, rounds)
    bead = joined.filter(pl.col("road") == "bead_plate")
    assert bead.height == rounds.height and (bead["seq"] + 1 == bead["round"]).all()
    big = joined.filter(pl.col("road") == "big_road").sort("seq")
    non_ties = rounds.filter(pl.col("outcome") != "T")
    assert big.height == non_ties.height
    assert big["mark"].to_list() == non_ties["outcome"].to_list()
    assert big["round"].to_list() == non_ties["round"].to_list()
    assert big["ties"].sum() == rounds.filter(pl.col("outcome") == "T").height
    fig = roads_chart(cells, rounds)
    assert isinstance(fig, go.Figure) and len(fig.layout.annotations) == 5  # the five road titles
    assert fig.layout.yaxis.range[0] > fig.layout.yaxis.range[1]  # row 0 on top
    dots = [t for t in fig.data if t.hovertemplate and "banker pair" in t.hovertemplate]
    assert sum(len(t.x) for t in dots) == bead["banker_pair"].sum() + big["banker_pair"].sum()


# --- in a real browser ------------------------------------------------------------------------------

# Chromium 156 logs every console message, whatever its level (log, warn, error, an uncaught
# exception), as one INFO line: `[pid:tid:date/time:INFO:CONSOLE:LINE] "message", source: URL (LINE)`
# (older versions: `INFO:CONSOLE(LINE)]`). The level is not shown, so any console line fails.
TICK = re.compile(r"[xy]\d*tick")  # the class of a plotly tick label's group: ytick, y2tick, ...
CONSOLE = re.compile(r"^\[[^\]]*:CONSOLE\b[^\]]*\]\s?(.*)$")


def chromium(*args: str, profile: Path) -> subprocess.CompletedProcess:
    return subprocess.run([chromium_binary(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=180, check=False)


def console_messages(stderr: str) -> list[str]:
    return [m.group(1) for line in stderr.splitlines() if (m := CONSOLE.match(line.strip()))]


def dump_dom(page: Path, profile: Path) -> tuple[str, list[str]]:
    done = chromium("--dump-dom", "--virtual-time-budget=15000", "--enable-logging=stderr", "--v=0",
                    page.resolve().as_uri(), profile=profile)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, console_messages(done.stderr)


class DrawnPage(HTMLParser):
    """The page as the browser drew it, from its DOM: which charts (data-chart) hold a plotly
    <svg class="main-svg">, each chart's tick labels by axis ((chart, "y2") -> labels, from plotly's
    <g class="y2tick"><text>), the key-figure tiles ({label, value, note}) and the tables' headings."""

    VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
                      "wbr"})

    def __init__(self):
        super().__init__()
        self.open: list[tuple[str | None, set[str]]] = []
        self.charts: dict[str, bool] = {}
        self.ticks: dict[tuple[str, str], list[str]] = {}
        self.tiles: list[dict[str, str]] = []
        self.headings: list[str] = []
        self.sink: tuple[int, dict | list, str | int] | None = None  # (depth, container, key) taking the text

    def nearest(self, wanted) -> str | None:
        """The innermost open element's class that `wanted` accepts."""
        return next((c for _, css in reversed(self.open) for c in css if wanted(c)), None)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in self.VOID:
            return
        key, css = attrs.get("data-chart"), set((attrs.get("class") or "").split())
        if key is not None:
            self.charts.setdefault(key, False)
        self.open.append((key, css))
        chart = next((k for k, _ in reversed(self.open) if k), None)
        if tag == "svg" and "main-svg" in css:
            for inside in filter(None, (k for k, _ in self.open)):
                self.charts[inside] = True
        elif tag == "text" and chart and (tick := self.nearest(TICK.fullmatch)):
            labels = self.ticks.setdefault((chart, tick.removesuffix("tick")), [])
            labels.append("")
            self.take(labels, len(labels) - 1)
        elif "kpi" in css:
            self.tiles.append({})
        elif css & {"label", "value", "note"} and self.tiles and self.nearest("kpi".__eq__):
            self.take(self.tiles[-1], (css & {"label", "value", "note"}).pop())
        elif tag == "th":
            self.headings.append("")
            self.take(self.headings, len(self.headings) - 1)

    def take(self, container: dict | list, key: str | int) -> None:
        if isinstance(container, dict):
            container[key] = ""
        self.sink = (len(self.open), container, key)

    def handle_data(self, data):
        if self.sink:
            _, container, key = self.sink
            container[key] += data

    def handle_endtag(self, tag):
        if tag not in self.VOID and self.open:
            self.open.pop()
            if self.sink and len(self.open) < self.sink[0]:
                self.sink = None


def drawn(page: Path, profile: Path) -> tuple[DrawnPage, list[str]]:
    dom, console = dump_dom(page, profile)
    parsed = DrawnPage()
    parsed.feed(dom)
    return parsed, console


def assert_true_percent_ticks(labels: list[str]) -> float:
    """Three or more distinct labels, evenly spaced as the ticks are (so each says its tick's value);
    returns the step in percent."""
    assert len(labels) >= 3 and len(set(labels)) == len(labels), labels
    values = sorted(float(label.replace("\u2212", "-").removesuffix("%")) for label in labels)
    steps = {round(high - low, 9) for low, high in zip(values, values[1:])}
    assert len(steps) == 1, labels
    return steps.pop()


def house_edge_labels(page: DrawnPage) -> None:
    """The tile's edge is the simulated one with its interval, the table's the exact one."""
    tile = next(t for t in page.tiles if "house edge" in t["label"].lower())
    assert tile["label"] == "Simulated house edge"
    assert re.fullmatch(r"Banker ± \d+\.\d\d\u00a0% \(95 %\); exact house edge \d\.\d{3}\u00a0%", tile["note"]), tile
    assert "Exact house edge" in page.headings and "House edge" not in page.headings


@pytest.mark.slow
def test_browser_screenshot(report, tmp_path):
    _, page = report
    shot = tmp_path / "page.png"
    done = chromium(f"--screenshot={shot}", "--window-size=1400,3000", "--virtual-time-budget=15000",
                    "--hide-scrollbars", page.resolve().as_uri(), profile=tmp_path / "profile")
    assert done.returncode == 0, done.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert (int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")) == (1400, 3000)
    assert len(data) > 50_000


@pytest.mark.slow
def test_browser_draws_every_chart_with_true_ticks_and_clear_labels(report, tmp_path):
    _, page = report
    parsed, console = drawn(page, tmp_path / "profile")
    assert set(parsed.charts) == CHARTS
    assert all(parsed.charts.values()), [key for key, done in parsed.charts.items() if not done]
    assert console == []
    assert_true_percent_ticks(parsed.ticks["patterns", "y"])
    for axis in ("y", "y2", "y3"):  # one panel per outcome
        assert_true_percent_ticks(parsed.ticks["outcomes", axis])
    assert_true_percent_ticks(parsed.ticks["ev", "x"])
    assert parsed.ticks["streaks", "x"][0] == "1"  # the shortest streak, not 0
    house_edge_labels(parsed)
    agreement = next(t for t in parsed.tiles if t["label"] == "Largest |z|")
    assert agreement["note"] == "all within ±3: matches the exact odds", agreement


@pytest.mark.slow
def test_browser_says_a_small_run_is_too_small_to_tell(spark, tmp_path):
    simulate(spark, tmp_path, seed=3, shoes=5, partitions=1, run_id="five-shoes")
    assert main(["marts", "--out", str(tmp_path)]) == 0
    parsed, console = drawn(build_report(Store.parse(str(tmp_path))), tmp_path / "profile")
    assert console == [] and all(parsed.charts.values())
    agreement = next(t for t in parsed.tiles if t["label"] == "Largest |z|")
    assert re.fullmatch(TOO_SMALL + r": telling the Banker edge takes \d{2},\d{3} rounds", agreement["note"]), agreement
    house_edge_labels(parsed)
    assert_true_percent_ticks(parsed.ticks["patterns", "y"])


@pytest.mark.slow
def test_browser_percent_ticks_stay_true_on_fine_steps(report, tmp_path):
    """The fixture's charts as a run 10,000 times larger would draw them (the same deviations, shrunk
    100-fold like their intervals): steps far below 1 %, where a fixed format repeats its labels."""
    folder, _ = report
    patterns = mart(folder, f"SELECT * FROM road_patterns WHERE run_id = '{RUN_ID}'").with_columns(
        p_next_banker=pl.col("p_unconditional") + (pl.col("p_next_banker") - pl.col("p_unconditional")) / 100,
        observations=pl.col("observations") * 10_000)
    summary = mart(folder, f"SELECT * FROM outcome_summary WHERE run_id = '{RUN_ID}'").with_columns(
        share=pl.col("exact_share") + (pl.col("share") - pl.col("exact_share")) / 100, rounds=pl.col("rounds") * 10_000)
    page = tmp_path / "fine.html"
    page.write_text("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><script>" + get_plotlyjs() + "</script>"
                    "</head><body>" + figure_div("patterns", pattern_chart(patterns))
                    + figure_div("outcomes", outcome_chart(summary)) + "</body></html>", encoding="utf-8")
    parsed, console = drawn(page, tmp_path / "profile")
    assert console == []
    assert assert_true_percent_ticks(parsed.ticks["patterns", "y"]) < 0.1
    for axis in ("y", "y2", "y3"):
        assert assert_true_percent_ticks(parsed.ticks["outcomes", axis]) < 0.01


@pytest.mark.slow
def test_browser_console_detector_catches_errors(report, tmp_path):
    """The detector above is proven on the same page with an error and a console.error injected."""
    _, page = report
    broken = tmp_path / "broken.html"
    text = page.read_text(encoding="utf-8")
    broken.write_text(text.replace("</body>", '<script>console.error("bang")</script>'
                                              '<script>throw new Error("boom")</script></body>'), encoding="utf-8")
    parsed, console = drawn(broken, tmp_path / "profile")
    assert any("Uncaught Error: boom" in message for message in console), console
    assert any("bang" in message for message in console), console
    assert all(parsed.charts.values())  # the charts themselves are still drawn


# --- the Composition section: runs with round_ev rows only -------------------------------------------

def composition_mart(folder: Path, name: str) -> pl.DataFrame:
    order = {"advantage_by_depth": "bet, unseen_low", "perfect_play": "bet",
             "count_efficiency": "count_system, bet, direction, trigger"}[name]
    return mart(folder, f"SELECT * FROM {name} WHERE run_id = '{COMPOSITION_RUN}' ORDER BY {order}")


def test_composition_section_has_its_charts_and_table(composition_report):
    folder, path = composition_report
    page = path.read_text(encoding="utf-8")
    assert page.count('id="composition"') == 1
    assert set(re.findall(r'class="chart[^"]*" data-chart="([a-z_]+)"', page)) == CHARTS | COMPOSITION_CHARTS
    assert page.count("<table") == 4 and "<th>Best count trigger</th>" in page
    for row in composition_mart(folder, "perfect_play").iter_rows(named=True):
        assert f"<td>{number(row['expected_units_per_shoe'], 4)}</td>" in page


def test_depth_charts_show_the_percentiles_and_shares(composition_report):
    folder, _ = composition_report
    depth = composition_mart(folder, "advantage_by_depth")
    fig = depth_fan_chart(depth)
    bets = depth["bet"].unique(maintain_order=True).to_list()
    assert len(fig.data) == 4 * len(bets) and fig.layout.xaxis.autorange == "reversed"
    shown = [t for t in fig.data if t.visible]
    banker = depth.filter(pl.col("bet") == "banker")
    assert list(shown[0].y) == banker["p01"].to_list() and list(shown[1].y) == banker["p99"].to_list()
    assert list(shown[2].y) == banker["p50"].to_list() and shown[1].fill == "tonexty"
    assert list(shown[0].x) == ((banker["unseen_low"] + banker["unseen_high"]) / 2).to_list()
    assert {b.label for b in fig.layout.updatemenus[0].buttons} == {b.replace("_", " ").capitalize() for b in bets}
    fig = favourable_chart(depth)
    for trace, bet in zip(fig.data, bets, strict=True):
        assert list(trace.y) == depth.filter(pl.col("bet") == bet)["share_positive"].to_list()


def test_trigger_curves_against_perfect_play(composition_report):
    folder, _ = composition_report
    counts, perfect = composition_mart(folder, "count_efficiency"), composition_mart(folder, "perfect_play")
    fig = trigger_chart(counts, perfect)
    systems = sorted(counts["count_system"].unique())
    shown = [t for t in fig.data if t.visible]
    assert len(shown) == len(systems) + 1 and len(fig.data) == len(shown) * perfect.height
    banker = counts.filter((pl.col("bet") == "banker") & (pl.col("share_bet") >= SHOWN_SHARE))
    for trace, system in zip(shown, systems):
        line = banker.filter(pl.col("count_system") == system)
        favoured = "low" if line["correlation"][0] < 0 else "high"  # the way the count's EV rises
        line = line.filter(pl.col("direction") == favoured)
        assert trace.name.endswith("(≤)" if favoured == "low" else "(≥)")
        assert list(trace.x) == line["trigger"].to_list()
        assert list(trace.y) == line["expected_units_per_shoe"].to_list()
    perfect_line = shown[-1]
    assert perfect_line.name == "perfect play"
    assert set(perfect_line.y) == {perfect.filter(pl.col("bet") == "banker")["expected_units_per_shoe"][0]}


@pytest.mark.slow
def test_browser_draws_the_composition_section_with_true_ticks(composition_report, tmp_path):
    _, page = composition_report
    parsed, console = drawn(page, tmp_path / "profile")
    assert set(parsed.charts) == CHARTS | COMPOSITION_CHARTS
    assert all(parsed.charts.values()), [key for key, done in parsed.charts.items() if not done]
    assert console == []
    for chart in ("depth_fan", "favourable"):
        assert_true_percent_ticks(parsed.ticks[chart, "y"])


@pytest.mark.parametrize("target", ["/", "/sys/baccarat-test/index.html"])
def test_report_page_where_no_file_can_go_is_one_line(report, cli, target):
    """`report --page /` raised ValueError (a path with an empty name) after reading the warehouse."""
    folder, page = report
    before = page.read_bytes()
    status, out, err = cli("report", "--out", folder, "--page", target)
    assert status == 2 and out == "" and err.count("\n") == 1, err
    assert err.startswith("error: ") and ("is a folder" if target == "/" else "cannot write the report") in err
    assert page.read_bytes() == before


def test_a_full_disk_under_the_page_was_bad_input_with_status_2(report, cli, tmp_path, monkeypatch):
    """`baccarat report --page` on a full disk said "cannot write the report ...: No space left on device" and
    exited 2, bad input; it is a failure of the world (README's exit statuses): 1, in the same one line."""
    from pipeline.report import build

    def full_disk(path, text):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(build, "write_text", full_disk)
    folder, _ = report
    status, out, err = cli("report", "--out", folder, "--page", tmp_path / "index.html")
    assert (status, out, err.count("\n")) == (1, "", 1), err
    assert err == f"error: cannot write the report {tmp_path / 'index.html'}: No space left on device\n"
