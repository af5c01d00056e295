"""The Composition section: exact odds before every round, from the composition marts (runs with
round_ev rows only). Marts (polars frames) in, plotly figures and HTML out; no I/O here."""

import html
from itertools import cycle

import plotly.graph_objects as go
import polars as pl

from pipeline.marts.inputs import COMPOSITION_MARTS
from pipeline.report.page import card, figure_div, table
from pipeline.report.style import (
    GRID,
    INK,
    MUTED,
    PERCENT_TICKS,
    bet_colour,
    bet_label,
    bet_menu,
    default_bet,
    number,
    percent,
    rgba,
    styled,
)

COUNT_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")
SHOWN_SHARE = 0.01  # trigger curves, and the best trigger, leave out triggers that bet fewer rounds than this
DEPTH_AXIS = {"title_text": "unseen cards (the shoe is dealt from left to right)", "autorange": "reversed",
              "gridcolor": GRID}


def _depth(depth: pl.DataFrame) -> pl.DataFrame:
    """Each bucket's middle, for the x axis, and its range, for the hover."""
    return depth.with_columns(x=(pl.col("unseen_low") + pl.col("unseen_high")) / 2,
                              cards=pl.format("{}–{}", "unseen_low", "unseen_high")).sort("bet", "unseen_low")


def _bets(frame: pl.DataFrame) -> list[str]:
    return list(dict.fromkeys(frame["bet"].to_list()))


def depth_fan_chart(depth: pl.DataFrame, default: str = "banker") -> go.Figure:
    """The exact EV before a round against the unseen cards: the 1-99 % range of the rounds as a band,
    the median and the mean as lines; one bet at a time (dropdown)."""
    frame, fig = _depth(depth), go.Figure()
    bets = _bets(frame)
    if not bets:
        return styled(fig)
    shown = default_bet(bets, default)
    for bet in bets:
        part, colour, visible = frame.filter(pl.col("bet") == bet), bet_colour(bet), bet == shown
        band = {"x": part["x"].to_list(), "mode": "lines", "line": {"width": 0}, "visible": visible,
                "hoverinfo": "skip"}
        fig.add_trace(go.Scatter(y=part["p01"].to_list(), showlegend=False, **band))
        fig.add_trace(go.Scatter(y=part["p99"].to_list(), fill="tonexty", fillcolor=rgba(colour, 0.18),
                                 name="1–99 % of rounds", **band))
        fig.add_trace(go.Scatter(
            x=part["x"].to_list(), y=part["p50"].to_list(), mode="lines+markers", name="median", visible=visible,
            line={"color": colour, "width": 2.5}, marker={"size": 6},
            customdata=list(zip(part["cards"], part["rounds"], part["p01"], part["p99"], part["share_positive"])),
            hovertemplate=("<b>%{customdata[0]} unseen cards</b> (%{customdata[1]:,} rounds)<br>median EV %{y:.3%}"
                           "<br>1–99 %: %{customdata[2]:.3%} to %{customdata[3]:.3%}"
                           "<br>EV above 0 in %{customdata[4]:.2%} of rounds<extra></extra>")))
        fig.add_trace(go.Scatter(x=part["x"].to_list(), y=part["mean_ev"].to_list(), mode="lines", name="mean",
                                 visible=visible, line={"color": INK, "width": 1.5, "dash": "dash"},
                                 hovertemplate="mean EV %{y:.3%}<extra></extra>"))
    fig.add_hline(y=0, line={"color": MUTED, "width": 1})
    fig.update_xaxes(**DEPTH_AXIS)
    fig.update_yaxes(title_text="exact EV per unit staked", tickformatstops=PERCENT_TICKS, gridcolor=GRID,
                     zeroline=False)
    return styled(fig, updatemenus=bet_menu(bets, 4, shown), margin={"l": 60, "r": 20, "t": 50, "b": 50})


def favourable_chart(depth: pl.DataFrame) -> go.Figure:
    """The share of rounds whose exact EV is above 0, per bet, against the unseen cards."""
    frame, fig = _depth(depth), go.Figure()
    for bet in _bets(frame):
        part = frame.filter(pl.col("bet") == bet)
        fig.add_trace(go.Scatter(
            x=part["x"].to_list(), y=part["share_positive"].to_list(), mode="lines+markers", name=bet_label(bet),
            line={"color": bet_colour(bet), "width": 2}, marker={"size": 5},
            customdata=list(zip(part["cards"], part["rounds"])),
            hovertemplate=(f"{bet_label(bet)}, %{{customdata[0]}} unseen cards: EV above 0 in %{{y:.2%}} "
                           "of %{customdata[1]:,} rounds<extra></extra>")))
    fig.update_xaxes(**DEPTH_AXIS)
    fig.update_yaxes(title_text="share of rounds with EV > 0", tickformatstops=PERCENT_TICKS, gridcolor=GRID,
                     rangemode="tozero")
    return styled(fig)


SIGNS = {"high": "≥", "low": "≤"}


def favoured_direction(counts: pl.DataFrame) -> pl.DataFrame:
    """Each count system read the way its correlation with the bet's exact EV favours: a rising EV
    with the true count is bet high (true count at or above the trigger), a falling one low."""
    favoured = pl.when(pl.col("correlation") < 0).then(pl.lit("low")).otherwise(pl.lit("high"))
    return counts.filter(pl.col("direction") == favoured)


def trigger_chart(counts: pl.DataFrame, perfect: pl.DataFrame, default: str = "banker") -> go.Figure:
    """Expected units won per shoe by a count player who bets one unit when the true count passes the
    trigger, one line per count system (the direction it favours), against perfect play (a player who
    sees every card); one bet at a time (dropdown)."""
    fig, bets = go.Figure(), _bets(counts)
    if not bets:
        return styled(fig)
    systems = sorted(set(counts["count_system"].to_list()))
    perfect_units = dict(zip(perfect["bet"].to_list(), perfect["expected_units_per_shoe"].to_list()))
    shown_rows = favoured_direction(counts).filter(pl.col("share_bet") >= SHOWN_SHARE)
    shown = default_bet(bets, default)
    for bet in bets:
        part = shown_rows.filter(pl.col("bet") == bet)
        for colour, system in zip(cycle(COUNT_COLOURS), systems):
            line = part.filter(pl.col("count_system") == system).sort("trigger")
            sign = SIGNS[line["direction"][0]] if line.height else ""
            fig.add_trace(go.Scatter(
                x=line["trigger"].to_list(), y=line["expected_units_per_shoe"].to_list(), mode="lines",
                name=f"{system.replace('_', ' ')} ({sign})", visible=bet == shown, line={"color": colour, "width": 2},
                customdata=list(zip(line["share_bet"], line["mean_ev_bet"], line["share_of_perfect"])),
                hovertemplate=(f"{html.escape(system)}, true count {sign} %{{x}}: %{{y:.4f}} units per shoe"
                               "<br>bets %{customdata[0]:.2%} of rounds at a mean EV of %{customdata[1]:.3%}"
                               "<br>%{customdata[2]:.1%} of perfect play<extra></extra>")))
        span = part["trigger"]
        fig.add_trace(go.Scatter(
            x=[span.min(), span.max()] if span.len() else [], y=[perfect_units.get(bet)] * 2 if span.len() else [],
            mode="lines", name="perfect play", visible=bet == shown, line={"color": INK, "width": 2, "dash": "dash"},
            hovertemplate="perfect play: %{y:.4f} units per shoe<extra></extra>"))
    fig.add_hline(y=0, line={"color": MUTED, "width": 1})
    fig.update_xaxes(title_text="true-count trigger (≥: bet at or above it; ≤: at or below it)", gridcolor=GRID)
    fig.update_yaxes(title_text="expected units won per shoe", gridcolor=GRID, zeroline=False)
    return styled(fig, updatemenus=bet_menu(bets, len(systems) + 1, shown),
                  margin={"l": 60, "r": 20, "t": 50, "b": 50})


def best_triggers(counts: pl.DataFrame) -> pl.DataFrame:
    """Per bet, the count system, direction and trigger that expect the most units per shoe, among the
    triggers that bet at least SHOWN_SHARE of the rounds."""
    return (counts.filter(pl.col("share_bet") >= SHOWN_SHARE)
            .sort("expected_units_per_shoe", "count_system", "direction", "trigger",
                  descending=[True, False, False, False])
            .group_by("bet", maintain_order=True).first())


def _trigger_text(best: dict) -> str:
    """'jacobson dragon 7 ≥ 4': a count system, its direction and its trigger."""
    level = f"{best['trigger']:g}".replace("-", "−")
    return f"{html.escape(best['count_system'].replace('_', ' '))} {SIGNS[best['direction']]} {level}"


def perfect_play_table(perfect: pl.DataFrame, counts: pl.DataFrame) -> str:
    best = {row["bet"]: row for row in best_triggers(counts).iter_rows(named=True)}
    rows = []
    for r in perfect.iter_rows(named=True):
        swatch = f'<span class="swatch" style="background:{bet_colour(r["bet"])}"></span>'
        interval = ("–" if r["realised_ci_low"] is None else
                    f"{number(r['realised_ci_low'], 3)} to {number(r['realised_ci_high'], 3)}")
        b = best.get(r["bet"], {})
        rows.append([swatch + html.escape(bet_label(r["bet"])), number(r["rounds_bet"]), percent(r["share_bet"]),
                     percent(r["mean_edge"], 3), number(r["expected_units_per_shoe"], 4),
                     number(r["realised_units_per_shoe"], 3), interval, _trigger_text(b) if b else "–",
                     number(b.get("expected_units_per_shoe"), 4), percent(b.get("share_of_perfect"), 1)])
    headers = ["Bet", "Rounds bet", "Share", "Mean edge", "Units / shoe", "Realised / shoe", "Realised 95 %",
               "Best count trigger", "Its units / shoe", "Of perfect"]
    return f'<div style="overflow-x: auto">{table(headers, rows)}</div>'


def composition_section(data: dict[str, pl.DataFrame]) -> str:
    """The section's HTML, or nothing for a run without composition marts."""
    if any(name not in data for name in COMPOSITION_MARTS) or data["advantage_by_depth"].is_empty():
        return ""
    depth, perfect, counts = (data[name] for name in COMPOSITION_MARTS)
    cards = [
        card("Exact EV by depth of the shoe",
             "Every round's exact EV from the cards a player has not seen, by 26 unseen cards: 1–99 % of rounds "
             "(band), median and mean. Pick a bet in the menu.", figure_div("depth_fan", depth_fan_chart(depth))),
        card("Favourable rounds by depth", "Share of rounds whose exact EV is above 0, per bet.",
             figure_div("favourable", favourable_chart(depth))),
        card("Counting against perfect play",
             "Expected units won per shoe when betting one unit whenever the true count passes the trigger, per "
             "count system, read the way its correlation with the bet's EV favours (≥: at or above, ≤: at or "
             "below); dashed: a player who sees every card and bets whenever the EV is above 0. Triggers that "
             f"bet under {percent(SHOWN_SHARE, 1)} of rounds are left out. Pick a bet in the menu.",
             figure_div("triggers", trigger_chart(counts, perfect)), wide=True),
        card("Perfect play and the best count trigger",
             "Perfect play from perfect_play: expected units per shoe, and the run's realised net of the same "
             "bets with a 95 % interval from the per-shoe totals; the count trigger that expects the most units "
             "per shoe from count_efficiency.", perfect_play_table(perfect, counts), wide=True),
    ]
    return ('<section id="composition"><h2 style="margin: 28px 0 12px; font-size: 20px">Composition: the exact '
            f'odds before every round</h2><div class="grid">{"".join(cards)}</div></section>')
