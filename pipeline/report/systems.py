"""The Betting systems section: sessions of each system backtested over the run, from the system marts
(runs with sessions rows only). Marts (polars frames) in, plotly figures and HTML out; no I/O here."""

import html

import plotly.graph_objects as go
import polars as pl

from pipeline.marts.inputs import SYSTEM_MARTS
from pipeline.play import ENDINGS
from pipeline.report.page import card, figure_div, table
from pipeline.report.style import GRID, INK, PERCENT_TICKS, bet_menu, number, percent, rgba, styled

FAN_COLOUR = "#1f77b4"
ENDING_COLOURS = {"goal": "#2ca02c", "ruin": "#d62728", "stop_loss": "#ff7f0e", "max_rounds": "#7f7f7f",
                  "shoe_end": "#9467bd"}


def _systems(frame: pl.DataFrame) -> list[str]:
    return list(dict.fromkeys(frame["system"].to_list()))


def fan_chart(paths: pl.DataFrame) -> go.Figure:
    """The bankroll after 10 to 1,000 rounds: 5-95 % and 25-75 % of the sessions as bands, the median as a
    line; one system at a time (dropdown)."""
    fig, systems = go.Figure(), _systems(paths)
    if not systems:
        return styled(fig)
    for system in systems:
        part, visible = paths.filter(pl.col("system") == system).sort("after_rounds"), system == systems[0]
        x = part["after_rounds"].to_list()
        for low, high, alpha, name in (("p05", "p95", 0.15, "5–95 % of sessions"), ("p25", "p75", 0.3, "25–75 %")):
            band = {"x": x, "mode": "lines", "line": {"width": 0}, "visible": visible, "hoverinfo": "skip"}
            fig.add_trace(go.Scatter(y=[float(v) for v in part[low]], showlegend=False, **band))
            fig.add_trace(go.Scatter(y=[float(v) for v in part[high]], fill="tonexty",
                                     fillcolor=rgba(FAN_COLOUR, alpha), name=name, **band))
        fig.add_trace(go.Scatter(x=x, y=[float(v) for v in part["p50"]], mode="lines+markers", name="median",
                                 visible=visible, line={"color": FAN_COLOUR, "width": 2.5},
                                 hovertemplate="after %{x} rounds: median bankroll %{y:,.2f}<extra></extra>"))
    return styled(fig, updatemenus=bet_menu(systems, 5, systems[0]),
                  xaxis={"title_text": "rounds played (ties included)", "type": "log", "gridcolor": GRID,
                         "tickvals": sorted(set(paths["after_rounds"]))},
                  yaxis={"title_text": "bankroll", "gridcolor": GRID})


def outcome_chart(outcomes: pl.DataFrame) -> go.Figure:
    """How the complete sessions of each system ended: one bar per ending, with its 95 % Wilson interval."""
    fig, frame = go.Figure(), outcomes.filter(pl.col("share").is_not_null())
    for ending in sorted(set(frame["ending"]), key=ENDINGS.index):
        part = frame.filter(pl.col("ending") == ending)
        fig.add_trace(go.Bar(
            x=part["system"].to_list(), y=part["share"].to_list(), name=ending.replace("_", " "),
            marker_color=ENDING_COLOURS.get(ending, INK),
            error_y={"type": "data", "symmetric": False, "color": INK, "thickness": 1,
                     "array": (part["share_high"] - part["share"]).to_list(),
                     "arrayminus": (part["share"] - part["share_low"]).to_list()},
            hovertemplate="%{x}: %{y:.2%} of complete sessions<extra>" + html.escape(ending) + "</extra>"))
    return styled(fig, height=400, barmode="group",
                  yaxis={"title_text": "share of complete sessions", "tickformatstops": PERCENT_TICKS,
                         "gridcolor": GRID})


def edge_table(edge: pl.DataFrame) -> str:
    """Per system: the net per unit wagered with its 95 % interval against the exact edge (flagged when
    the interval misses it)."""
    rows = []
    for r in edge.iter_rows(named=True):
        interval = ("–" if r["net_per_wagered_low"] is None else
                    f"{percent(r['net_per_wagered_low'], 3)} to {percent(r['net_per_wagered_high'], 3)}")
        inside = {True: "yes", False: "!no", None: "–"}[r["edge_in_interval"]]
        rows.append([html.escape(r["system"]), number(r["sessions"]), number(float(r["wagered"]), 2),
                     number(float(r["net"]), 2), percent(r["net_per_wagered"], 3), interval,
                     percent(r["exact_edge"], 3), inside])
    headers = ["System", "Complete sessions", "Wagered", "Net", "Net / wagered", "95 %", "Exact edge", "Inside"]
    return f'<div style="overflow-x: auto">{table(headers, rows)}</div>'


def systems_section(data: dict[str, pl.DataFrame]) -> str:
    """The section's HTML, or nothing for a run without system marts."""
    if any(name not in data for name in SYSTEM_MARTS) or data["system_outcomes"].is_empty():
        return ""
    outcomes, edge, paths = (data[name] for name in ("system_outcomes", "system_edge", "bankroll_paths"))
    cards = [
        card("Bankroll over a session",
             "The bankroll after 10 to 1,000 rounds of the complete sessions (a session that ended sooner counts "
             "with its end bankroll): 5–95 % and 25–75 % of sessions (bands) and the median. Pick a system in "
             "the menu.", figure_div("bankroll_fan", fan_chart(paths))),
        card("How sessions end",
             "Share of each system's complete sessions reaching the goal, ruined, stopped, out of rounds or at the "
             "shoe's end, with 95 % Wilson intervals; sessions the run's end cut short are left out.",
             figure_div("session_endings", outcome_chart(outcomes))),
        card("Net per unit wagered against the exact edge",
             "From system_edge: the net of the complete sessions per unit wagered with a 95 % interval (delta "
             "method over sessions), and the exact edge of the bets placed. Wald's identity: no progression "
             "changes it; orange: the interval misses it.", edge_table(edge), wide=True),
    ]
    return ('<section id="systems"><h2 style="margin: 28px 0 12px; font-size: 20px">Betting systems</h2>'
            f'<div class="grid">{"".join(cards)}</div></section>')
