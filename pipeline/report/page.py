"""The page: header, key figures, a grid of chart cards and the tables, as one HTML string."""

import html
import math
from datetime import datetime

import plotly.graph_objects as go
import polars as pl
from plotly.offline import get_plotlyjs

from pipeline.cards import decks_text
from pipeline.config_files import shipped_or_file
from pipeline.report.charts import (
    convergence_chart,
    ev_chart,
    outcome_chart,
    pattern_chart,
    payout_fan_chart,
    streak_chart,
)
from pipeline.report.roads import roads_chart
from pipeline.report.style import (
    BANKER,
    HIGHLIGHT,
    MUTED,
    SIDE_COLOURS,
    SIDE_NAMES,
    TIE,
    Z95,
    bet_colour,
    bet_label,
    number,
    percent,
)
from pipeline.runs import STRATEGIES, RunRecord

PLOT_CONFIG = {"displaylogo": False, "responsive": True, "displayModeBar": False}
# Charts are drawn while the page is parsed; once everything is laid out, fit them to their cards.
RESIZE = ("window.addEventListener('load', function () { document.querySelectorAll('.js-plotly-plot')"
          ".forEach(function (plot) { Plotly.Plots.resize(plot); }); });")

CSS = """
:root { --ink: #1f2933; --muted: #616e7c; --line: #e4e7eb; --bg: #f3f4f6; --felt: #0b4a36;
        --banker: #d62728; --player: #1f77b4; --tie: #2ca02c; --flag: #ff7f0e; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink);
       font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; }
header { background: linear-gradient(120deg, #06291e, var(--felt)); color: #fff; padding: 22px 32px 18px; }
header h1 { margin: 0; font-size: 26px; font-weight: 650; letter-spacing: .2px; }
header h1 .rules { display: inline-block; margin-left: 12px; padding: 2px 10px; border-radius: 999px;
                   background: rgba(255,255,255,.16); font-size: 14px; vertical-align: middle; font-weight: 500; }
header p { margin: 6px 0 0; color: #cfe3da; font-size: 13px; }
main { max-width: 1440px; margin: 0 auto; padding: 20px 24px 40px; }
.kpis { display: grid; grid-template-columns: repeat(auto-fit, minmax(170px, 1fr)); gap: 12px; margin-bottom: 16px; }
.kpi { background: #fff; border-radius: 10px; padding: 12px 16px; box-shadow: 0 1px 3px rgba(15,23,42,.08);
       border-top: 4px solid var(--accent, #7b8794); }
.kpi .label { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .5px;
              min-height: 2.9em; }
.kpi .value { font-size: 24px; font-weight: 650; margin-top: 2px; font-variant-numeric: tabular-nums; }
.kpi .note { color: var(--muted); font-size: 12px; }
.grid { display: grid; grid-template-columns: repeat(2, minmax(0, 1fr)); gap: 16px; }
@media (max-width: 1100px) { .grid { grid-template-columns: minmax(0, 1fr); } }
.card { background: #fff; border-radius: 10px; padding: 14px 16px 8px; box-shadow: 0 1px 3px rgba(15,23,42,.08);
        min-width: 0; }
.card.wide { grid-column: 1 / -1; }
.card h2 { margin: 0; font-size: 16px; font-weight: 650; }
.card .caption { margin: 2px 0 6px; color: var(--muted); font-size: 12.5px; }
.chart { width: 100%; }
.chart.scroll { overflow-x: auto; }
.chart.scroll > div { margin: 0 auto; }
table { border-collapse: collapse; width: 100%; margin: 6px 0 12px; font-variant-numeric: tabular-nums; }
th, td { padding: 6px 10px; border-bottom: 1px solid var(--line); text-align: right; white-space: nowrap; }
th { color: var(--muted); font-weight: 600; font-size: 12px; text-transform: uppercase; letter-spacing: .3px; }
th:first-child, td:first-child { text-align: left; }
table.params td { text-align: left; white-space: normal; }
table.params td:first-child { color: var(--muted); width: 34%; }
td.flag { color: var(--flag); font-weight: 700; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 50%; margin-right: 8px; }
h3 { margin: 10px 0 0; font-size: 13px; color: var(--muted); text-transform: uppercase; letter-spacing: .4px; }
footer { color: var(--muted); font-size: 12px; text-align: center; padding: 8px 0 24px; }
"""

TITLE = "Baccarat report"  # the page's title, before the run id: `--page` replaces only a page with it


def figure_div(key: str, fig: go.Figure, scroll: bool = False) -> str:
    """A chart container the browser test can find: class "chart", data-chart KEY."""
    body = fig.to_html(full_html=False, include_plotlyjs=False, div_id=f"plot-{key}", config=PLOT_CONFIG)
    return f'<div class="chart{" scroll" if scroll else ""}" data-chart="{key}" id="chart-{key}">{body}</div>'


def card(title: str, caption: str, body: str, wide: bool = False) -> str:
    return (f'<section class="card{" wide" if wide else ""}"><h2>{html.escape(title)}</h2>'
            f'<p class="caption">{html.escape(caption)}</p>{body}</section>')


def table(headers: list[str], rows: list[list[str]], css: str = "") -> str:
    """Cells are HTML already (escaped by the caller); a cell starting with '!' is flagged."""
    head = "".join(f"<th>{h}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f'<td class="flag">{c[1:]}</td>' if c.startswith("!") else f"<td>{c}</td>"
                                    for c in row) + "</tr>" for row in rows)
    return f'<table class="{css}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _z(value: float | None) -> str:
    return "–" if value is None else ("!" if abs(value) > 2 else "") + f"{value:+.2f}".replace("-", "−")


def outcome_table(summary: pl.DataFrame) -> str:
    rows = []
    for r in summary.iter_rows(named=True):
        half = Z95 * (r["exact_share"] * (1 - r["exact_share"]) / r["rounds"]) ** 0.5 if r["rounds"] else None
        swatch = f'<span class="swatch" style="background:{SIDE_COLOURS.get(r["outcome"], "#999")}"></span>'
        rows.append([swatch + html.escape(SIDE_NAMES.get(r["outcome"], r["outcome"])), number(r["count"]),
                     percent(r["share"], 3), percent(r["exact_share"], 3),
                     "–" if half is None else f"± {percent(half, 3)}", _z(r["z_score"])])
    return table(["Outcome", "Rounds won", "Simulated share", "Exact share", "95 % interval", "z"], rows)


def bet_table(bets: pl.DataFrame) -> str:
    rows = []
    for r in bets.iter_rows(named=True):
        swatch = f'<span class="swatch" style="background:{bet_colour(r["bet"])}"></span>'
        interval = ("–" if r["ev_ci_low"] is None or r["ev_ci_high"] is None
                    else f"{percent(r['ev_ci_low'], 3)} to {percent(r['ev_ci_high'], 3)}")
        rows.append([swatch + html.escape(bet_label(r["bet"])), number(r["rounds"]), number(r["hits"]),
                     number(float(r["total_net"]), 2), percent(r["ev"], 3), interval,
                     percent(r["exact_ev"], 3), percent(-r["exact_ev"], 3),
                     number(r["sd"], 4), number(r["exact_sd"], 4), _z(r["z_score"])])
    return table(["Bet", "Rounds", "Hits", "Total net", "Simulated EV", "EV 95 % interval", "Exact EV",
                  "Exact house edge", "SD", "Exact SD", "z"], rows)


def _when(moment: datetime | None) -> str:
    return "–" if moment is None else moment.strftime("%Y-%m-%d %H:%M:%S %Z").strip()


def _duration(run: RunRecord | None) -> str:
    return "–" if run is None else f"{(run.ended_at - run.started_at).total_seconds():,.1f} s"


def payouts(run: RunRecord | None) -> str:
    """'player 1:1, banker 0.95:1 (…), tie 8:1' from the run's resolved rule set."""
    bets = run.rule_set["bets"] if run else {}
    parts = []
    for bet, terms in bets.items():
        extra = []
        if terms.get("pays_on_six") is not None:
            extra.append(f"{terms['pays_on_six']}:1 on a winning 6")
        if terms.get("push_on_three_card_seven"):
            extra.append("push on a three-card 7")
        parts.append(f"{bet_label(bet)} {terms.get('pays')}:1" + (f" ({', '.join(extra)})" if extra else ""))
    return ", ".join(parts) or "–"


def _known(run: RunRecord | None, field: str, first: dict, missing: str):
    """A field of the run's record; without a runs row, the summary's value or `missing`."""
    return getattr(run, field) if run else first.get(field, missing)


def _strategies(run: RunRecord | None) -> list[tuple[str, str]]:
    """The strategy pair a game with options was played with, named as bet_performance names it (NAME.yaml
    for one not shipped under its name): the exact EVs on the page are this pair's."""
    if run is None or run.strategies is None:
        return []
    return [("Strategies", f"Player {shipped_or_file(STRATEGIES, run.strategies['player'])}, "
                           f"Banker {shipped_or_file(STRATEGIES, run.strategies['banker'])}")]


def parameters(run_id: str, run: RunRecord | None, summary: pl.DataFrame) -> list[tuple[str, str]]:
    """The run's parameters as (name, value) pairs, from its row in runs (the commit)."""
    rules = run.rule_set if run else {}
    first = summary.row(0, named=True) if summary.height else {}
    burn, cut = rules.get("burn") or {}, rules.get("cut_card") or {}
    return [
        ("Run id", run_id),
        ("Rules", f"{_known(run, 'rules', first, '–')}" + (f": {rules['description']}" if rules.get(
            "description") else "")),
        ("Decks", str(_known(run, "decks", {}, "–"))),
        ("Payouts (net per unit)", payouts(run)),
        ("Burn", "on" if burn.get("enabled") else "off" if burn else "–"),
        ("Cut card", f"{cut['cards_from_end']} cards from the end" + (", one more round after it"
                                                                      if cut.get("extra_round") else "")
         if cut else "–"),
        *_strategies(run),
        ("Seed", str(_known(run, "seed", {}, "–"))),
        ("Shoes", number(_known(run, "shoes", first, None))),
        ("Rounds", number(_known(run, "rounds", first, None))),
        ("Partitions", str(_known(run, "partitions", {}, "–"))),
        ("Spark master", str(_known(run, "spark_master", {}, "–"))),
        ("Started", _when(run and run.started_at)),
        ("Ended", _when(run and run.ended_at) + f" (dealt in {_duration(run)})"),
        ("Software version", f"baccarat-pipeline {_known(run, 'software_version', {}, '–')}"),
    ]


def parameters_table(pairs: list[tuple[str, str]]) -> str:
    return table(["Parameter", "Value"], [[html.escape(k), html.escape(v)] for k, v in pairs], css="params")


def header(run_id: str, run: RunRecord | None, summary: pl.DataFrame) -> str:
    first = summary.row(0, named=True) if summary.height else {}
    rules = _known(run, "rules", first, "?")
    facts = [f"{rules}", decks_text(run.decks) if run else "? decks", f"seed {_known(run, 'seed', {}, '?')}",
             f"{number(_known(run, 'shoes', first, None))} shoes",
             f"{number(_known(run, 'rounds', first, None))} rounds",
             f"{_known(run, 'partitions', {}, '?')} partitions", f"ended {_when(run and run.ended_at)}",
             f"baccarat-pipeline {_known(run, 'software_version', {}, '?')}"]
    if run is None:
        facts.append("run missing")
    return (f'<header><h1>Baccarat run {html.escape(run_id)}<span class="rules">{html.escape(rules)}</span></h1>'
            f'<p>{" · ".join(html.escape(f) for f in facts)}</p></header>')


def rounds_to_tell_edge(bet: dict) -> int | None:
    """The fewest rounds for which the 95 % interval of the bet's EV (from its exact SD) is narrower than
    its edge (the exact EV's distance from 0): from then on the run can tell the game from a fair one and
    from one with twice the edge. None for a fair bet."""
    edge, sd = abs(bet["exact_ev"] or 0.0), bet["exact_sd"]
    return math.floor((Z95 * sd / edge) ** 2) + 1 if edge and sd else None


def too_small_to_tell(bets: pl.DataFrame) -> tuple[int, str] | None:
    """(rounds needed, bet) for the bet whose house edge the run is furthest from telling, or None when
    the run can tell every bet's edge."""
    short = [(needed, r["bet"]) for r in bets.iter_rows(named=True)
             if (needed := rounds_to_tell_edge(r)) is not None and r["rounds"] < needed]
    return max(short, default=None)


def house_edge_tile(banker: dict) -> tuple[str, str, str, str]:
    """The simulated edge with its 95 % interval, beside the exact one (the tables' 'Exact house edge')."""
    low, high = banker["ev_ci_low"], banker["ev_ci_high"]
    interval = "" if low is None or high is None else f" ± {percent((high - low) / 2)} (95 %)"
    return ("Simulated house edge", percent(-banker["ev"]),
            f"Banker{interval}; exact house edge {percent(-banker['exact_ev'], 3)}", BANKER)


def agreement_tile(worst: float, bets: pl.DataFrame) -> tuple[str, str, str, str]:
    """The largest |z| and what it says: a large z is worth a look in any run, but a small one only
    shows agreement in a run large enough to tell the house edges (see too_small_to_tell)."""
    short = too_small_to_tell(bets)
    if worst >= 3:
        return "Largest |z|", f"{worst:.2f}", "above 3: look closer", HIGHLIGHT
    if short is not None:
        needed, bet = short
        return ("Largest |z|", f"{worst:.2f}", f"sample too small to tell: telling the {bet_label(bet)} edge "
                f"takes {needed:,} rounds", MUTED)
    return "Largest |z|", f"{worst:.2f}", "all within ±3: matches the exact odds", TIE


def kpis(summary: pl.DataFrame, bets: pl.DataFrame) -> str:
    """Key figures on top: size of the run, the three shares, the banker edge, the worst z."""
    tiles = []
    if summary.height:
        first = summary.row(0, named=True)
        per_shoe = first["rounds"] / first["shoes"] if first["shoes"] else 0
        tiles.append(("Shoes", number(first["shoes"]), f"{per_shoe:.1f} rounds per shoe", "#7b8794"))
        tiles.append(("Rounds", number(first["rounds"]), "one unit staked per bet", "#7b8794"))
    for r in summary.iter_rows(named=True):
        tiles.append((SIDE_NAMES.get(r["outcome"], r["outcome"]), percent(r["share"]),
                      f"exact {percent(r['exact_share'])}", SIDE_COLOURS.get(r["outcome"], "#7b8794")))
    banker = bets.filter(pl.col("bet") == "banker")
    if banker.height:
        tiles.append(house_edge_tile(banker.row(0, named=True)))
    zs = [abs(z) for z in summary["z_score"].to_list() + bets["z_score"].to_list() if z is not None]
    if zs:
        tiles.append(agreement_tile(max(zs), bets))
    return '<div class="kpis">' + "".join(
        f'<div class="kpi" style="--accent:{accent}"><div class="label">{html.escape(label)}</div>'
        f'<div class="value">{html.escape(value)}</div><div class="note">{html.escape(note)}</div></div>'
        for label, value, note, accent in tiles) + "</div>"


def chart_cards(data: dict[str, pl.DataFrame], shoe_id: int | None) -> dict[str, str]:
    """Every chart card, keyed by its data-chart name."""
    summary = data["outcome_summary"]
    first = summary.row(0, named=True) if summary.height else {"rounds": 0, "shoes": 0}
    shoe_rounds = first["rounds"] / first["shoes"] if first["shoes"] else 80.0
    roads_title = f"The five roads of shoe {shoe_id}" if shoe_id is not None else "The five roads"
    return {
        "outcomes": card("Outcomes against the exact odds",
                         "Dot: simulated share with its 95 % interval; black bar: the exact probability.",
                         figure_div("outcomes", outcome_chart(summary))),
        "ev": card("EV per bet and house edge",
                   "Simulated EV per unit staked with its 95 % interval; open diamond: the exact EV "
                   "(house edge = −EV).", figure_div("ev", ev_chart(data["bet_performance"]))),
        "payout": card("Payout variance: what a session looks like",
                       "Net after one round, one shoe, 100 and 1,000 rounds: 1–99 % and 5–95 % of sessions "
                       "(bands), median and mean. Pick a bet in the menu.",
                       figure_div("payout", payout_fan_chart(data["payout_variance"], shoe_rounds))),
        "convergence": card("Convergence of the EV",
                            "Running EV after n rounds inside the exact EV's 95 % funnel. Pick a bet in the menu.",
                            figure_div("convergence", convergence_chart(data["ev_convergence"]))),
        "streaks": card("Streaks against the geometric law",
                        "Share of Banker and Player streaks (big-road columns) and tie runs by length; "
                        "dotted: independent rounds.", figure_div("streaks", streak_chart(data["streaks"]))),
        "patterns": card("Do the roads predict?",
                         "P(next result = Banker) after each pattern of the last 1–4 results or each derived-road "
                         "mark, with 95 % intervals, against the unconditional rate; orange: |z| > 2 "
                         "(about 1 in 20 by chance alone).",
                         figure_div("patterns", pattern_chart(data["road_patterns"])), wide=True),
        "roads": card(roads_title,
                      "Bead plate (every round), big road (a tie: green slash; banker pair: red dot top left; "
                      "player pair: blue dot bottom right), then big eye boy, small road and cockroach pig "
                      "(red: the road repeats, blue: it chops).",
                      figure_div("roads", roads_chart(data["road_cells"], data["shoe_rounds"]), scroll=True),
                      wide=True),
    }


def assemble_page(run_id: str, run: RunRecord | None, data: dict[str, pl.DataFrame], shoe_id: int | None,
                  sections: str = "") -> str:
    """The whole page: plotly.js inlined once in the head, then the header, key figures, charts, tables,
    and `sections` (HTML) below them."""
    summary, bets = data["outcome_summary"], data["bet_performance"]
    charts = chart_cards(data, shoe_id)
    tables = card("The figures", "From outcome_summary and bet_performance; orange z: |z| > 2.",
                  "<h3>Outcomes</h3>" + outcome_table(summary) + "<h3>Bets</h3>" + bet_table(bets), wide=True)
    params = card("Run parameters", "From the run's row in the runs table (its commit).",
                  parameters_table(parameters(run_id, run, summary)))
    order = [charts["outcomes"], charts["ev"], charts["payout"], charts["convergence"], charts["streaks"], params,
             charts["patterns"], charts["roads"], tables]
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>{TITLE}: {html.escape(run_id)}</title><style>{CSS}</style>"
        "<script type=\"text/javascript\">window.PlotlyConfig = {MathJaxConfig: 'local'};</script>"
        f"<script type=\"text/javascript\">{get_plotlyjs()}</script></head><body>"
        f"{header(run_id, run, summary)}<main>{kpis(summary, bets)}"
        f"<div class=\"grid\">{''.join(order)}</div>{sections}</main>"
        f"<script type=\"text/javascript\">{RESIZE}</script>"
        "<footer>Built by baccarat-pipeline from warehouse.duckdb · one self-contained file: opens with no network"
        "</footer>"
        "</body></html>\n"
    )
