"""One function per chart: marts (polars frames) in, a plotly figure out. No I/O here."""

import math

import plotly.graph_objects as go
import polars as pl
from plotly.subplots import make_subplots

from pipeline.report.style import (
    GRID,
    HIGHLIGHT,
    INK,
    MUTED,
    PERCENT_TICKS,
    SIDE_COLOURS,
    SIDE_NAMES,
    Z95,
    bet_colour,
    bet_label,
    bet_menu,
    default_bet,
    percent,
    rgba,
    styled,
)

SIDES = ("B", "P", "T")
HORIZONS = {"round": 1.0, "session_100": 100.0, "session_1000": 1000.0}  # "shoe": mean rounds per shoe
CONDITIONS = {"last_1": "last 1", "last_2": "last 2", "last_3": "last 3", "last_4": "last 4",
              "big_eye_boy": "big eye", "small_road": "small", "cockroach_pig": "roach"}


def _side_order(frame: pl.DataFrame, column: str) -> pl.DataFrame:
    return frame.with_columns(_order=pl.col(column).replace_strict({s: i for i, s in enumerate(SIDES)},
                                                                   default=len(SIDES))).sort("_order")


def outcome_chart(summary: pl.DataFrame) -> go.Figure:
    """Each outcome's simulated share with its 95 % interval, against the exact probability;
    one panel per outcome so that every interval is readable on its own scale."""
    rows = list(_side_order(summary, "outcome").iter_rows(named=True))
    fig = make_subplots(rows=1, cols=max(len(rows), 1), horizontal_spacing=0.1)
    for i, row in enumerate(rows, start=1):
        p0, share, n = row["exact_share"], row["share"] or 0.0, row["rounds"]
        half = Z95 * math.sqrt(p0 * (1 - p0) / n) if n else 0.0
        colour, name = SIDE_COLOURS.get(row["outcome"], INK), SIDE_NAMES.get(row["outcome"], row["outcome"])
        fig.add_trace(go.Scatter(
            x=[name], y=[share], mode="markers", marker={"size": 14, "color": colour},
            error_y={"type": "data", "array": [half], "color": colour, "thickness": 2.5, "width": 14}, showlegend=False,
            hovertemplate=f"{name}: %{{y:.3%}} ± {half:.3%}<br>{row['count']:,} of {n:,} rounds<extra></extra>",
        ), row=1, col=i)
        fig.add_trace(go.Scatter(
            x=[name], y=[p0], mode="markers", showlegend=False,
            marker={"symbol": "line-ew-open", "size": 60, "color": INK, "line": {"width": 3, "color": INK}},
            hovertemplate=f"exact {name}: %{{y:.4%}}<extra></extra>",
        ), row=1, col=i)
        low, high = min(share - half, p0), max(share + half, p0)
        pad = max(high - low, 1e-6) * 0.35
        z = row["z_score"]
        fig.update_yaxes(range=[low - pad, high + pad], tickformatstops=PERCENT_TICKS, gridcolor=GRID, row=1, col=i)
        fig.update_xaxes(title_text=f"z = {z:+.2f}".replace("-", "−") if z is not None else "", row=1, col=i,
                         title_font={"size": 11, "color": MUTED})
    return styled(fig, height=340, margin={"l": 60, "r": 20, "t": 20, "b": 50})


def ev_chart(bets: pl.DataFrame) -> go.Figure:
    """Per bet, the simulated EV per unit with its 95 % interval (bars) against the exact EV (open
    diamond); the house edge is minus the exact EV."""
    fig = go.Figure()
    rows = list(bets.iter_rows(named=True))
    labels = [f"{bet_label(r['bet'])}  (exact edge {percent(-r['exact_ev'], 3)})" for r in rows]
    for row, label in zip(rows, labels):
        ev = row["ev"]
        low, high = row["ev_ci_low"], row["ev_ci_high"]
        fig.add_trace(go.Scatter(
            x=[ev], y=[label], mode="markers", marker={"size": 12, "color": bet_colour(row["bet"])}, showlegend=False,
            error_x={"type": "data", "symmetric": False, "array": [(high if high is not None else ev) - ev],
                         "arrayminus": [ev - (low if low is not None else ev)], "thickness": 2.5, "width": 8,
                         "color": bet_colour(row["bet"])},
            hovertemplate=(f"{bet_label(row['bet'])}<br>simulated EV %{{x:.3%}}"
                           + (f" (95 %: {low:.3%} to {high:.3%})" if low is not None and high is not None else "")
                           + f"<br>exact EV {row['exact_ev']:.3%}, z = {row['z_score'] or 0:+.2f}<extra></extra>"),
        ))
    fig.add_trace(go.Scatter(
        x=[r["exact_ev"] for r in rows], y=labels,
        mode="markers", name="exact EV",
        marker={"symbol": "diamond-open", "size": 13, "line": {"width": 2.5}, "color": INK},
        hovertemplate="exact EV %{x:.4%}<extra></extra>",
    ))
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name="simulated EV ± 95 %",
                             marker={"size": 12, "color": MUTED}))
    fig.add_vline(x=0, line={"color": MUTED, "dash": "dot", "width": 1})
    fig.update_xaxes(tickformatstops=PERCENT_TICKS, title_text="EV per unit staked", gridcolor=GRID, zeroline=False)
    fig.update_yaxes(autorange="reversed", gridcolor=GRID)
    return styled(fig, height=340, margin={"l": 20, "r": 20, "t": 40, "b": 50})


def payout_fan_chart(variance: pl.DataFrame, shoe_rounds: float, default: str = "banker") -> go.Figure:
    """Net of a session against its length: the 1-99 % and 5-95 % ranges as bands, the median and the
    mean as lines; one bet at a time (dropdown)."""
    horizons = {**HORIZONS, "shoe": shoe_rounds}
    frame = (variance.filter(pl.col("horizon").is_in(list(horizons)) & pl.col("p01").is_not_null())
             .with_columns([pl.col(c).cast(pl.Float64) for c in ("p01", "p05", "p50", "p95", "p99")],
                           x=pl.col("horizon").replace_strict(horizons, return_dtype=pl.Float64))
             .sort("x"))
    bets = list(dict.fromkeys(variance["bet"].to_list()))
    fig = go.Figure()
    if not bets:
        return styled(fig)
    shown = default_bet(bets, default)
    for bet in bets:
        part, colour, visible = frame.filter(pl.col("bet") == bet), bet_colour(bet), bet == shown
        x = part["x"].to_list()
        names = [f"{h} ({v:,.0f} rounds)" if h == "shoe" else h.replace("_", " ") for h, v in
                 zip(part["horizon"], part["x"])]
        band = {"mode": "lines", "line": {"width": 0}, "x": x, "visible": visible, "hoverinfo": "skip"}
        fig.add_trace(go.Scatter(y=part["p01"].to_list(), showlegend=False, **band))
        fig.add_trace(go.Scatter(y=part["p99"].to_list(), fill="tonexty", fillcolor=rgba(colour, 0.14),
                                 name="1–99 %", **band))
        fig.add_trace(go.Scatter(y=part["p05"].to_list(), showlegend=False, **band))
        fig.add_trace(go.Scatter(y=part["p95"].to_list(), fill="tonexty", fillcolor=rgba(colour, 0.30),
                                 name="5–95 %", **band))
        fig.add_trace(go.Scatter(
            x=x, y=part["p50"].to_list(), mode="lines+markers", name="median", visible=visible,
            line={"color": colour, "width": 2.5}, marker={"size": 7}, customdata=list(zip(
                names, part["p01"], part["p05"], part["p95"], part["p99"], part["sessions"], part["share_ahead"])),
            hovertemplate=("<b>%{customdata[0]}</b> (%{customdata[5]:,} sessions)<br>median %{y:,.2f}"
                           "<br>5–95 %: %{customdata[2]:,.2f} to %{customdata[3]:,.2f}"
                           "<br>1–99 %: %{customdata[1]:,.2f} to %{customdata[4]:,.2f}"
                           "<br>ahead in %{customdata[6]:.1%} of sessions<extra></extra>"),
        ))
        fig.add_trace(go.Scatter(x=x, y=part["mean"].to_list(), mode="lines", name="mean", visible=visible,
                                 line={"color": INK, "width": 1.5, "dash": "dash"},
                                 hovertemplate="mean %{y:,.2f}<extra></extra>"))
    fig.add_hline(y=0, line={"color": MUTED, "width": 1})
    fig.update_xaxes(type="log", title_text="session length (rounds, log scale)", gridcolor=GRID,
                     tickvals=[1, 10, 100, 1000], ticktext=["1", "10", "100", "1,000"])
    fig.update_yaxes(title_text="net (units)", gridcolor=GRID, zeroline=False)
    return styled(fig, updatemenus=bet_menu(bets, 6, shown), margin={"l": 60, "r": 20, "t": 50, "b": 50})


def convergence_chart(convergence: pl.DataFrame, default: str = "banker") -> go.Figure:
    """The running EV after n rounds inside the funnel of the exact EV's 95 % band (law of large
    numbers); one bet at a time (dropdown)."""
    bets = list(dict.fromkeys(convergence["bet"].to_list()))
    fig = go.Figure()
    if not bets:
        return styled(fig)
    shown = default_bet(bets, default)
    for bet in bets:
        part, colour, visible = convergence.filter(pl.col("bet") == bet).sort("rounds"), bet_colour(bet), bet == shown
        x = part["rounds"].to_list()
        fig.add_trace(go.Scatter(x=x, y=part["exact_band_low"].to_list(), mode="lines", line={"width": 0},
                                 showlegend=False, visible=visible, hoverinfo="skip"))
        fig.add_trace(go.Scatter(x=x, y=part["exact_band_high"].to_list(), mode="lines", line={"width": 0},
                                 fill="tonexty", fillcolor=rgba(colour, 0.16), name="exact EV ± 95 %",
                                 visible=visible, hoverinfo="skip"))
        fig.add_trace(go.Scatter(x=x, y=part["exact_ev"].to_list(), mode="lines", name="exact EV", visible=visible,
                                 line={"color": INK, "dash": "dash", "width": 1.5},
                                 hovertemplate="exact EV %{y:.4f}<extra></extra>"))
        fig.add_trace(go.Scatter(x=x, y=part["ev"].to_list(), mode="lines+markers", name="simulated EV",
                                 visible=visible, line={"color": colour, "width": 2.5}, marker={"size": 5},
                                 hovertemplate="after %{x:,} rounds: EV %{y:.4f}<extra></extra>"))
    fig.update_xaxes(type="log", title_text="rounds (log scale)", gridcolor=GRID, dtick=1, tickformat=",d")
    fig.update_yaxes(title_text="EV per unit staked", gridcolor=GRID)
    return styled(fig, updatemenus=bet_menu(bets, 4, shown), margin={"l": 60, "r": 20, "t": 50, "b": 50})


def streak_chart(streaks: pl.DataFrame) -> go.Figure:
    """Share of streaks by length (dots) against the geometric law of independent rounds (lines),
    log scale: a straight line means no memory."""
    fig = go.Figure()
    for side in SIDES:
        part = streaks.filter(pl.col("side") == side).sort("length")
        if part.is_empty():
            continue
        colour, name = SIDE_COLOURS[side], SIDE_NAMES[side]
        fig.add_trace(go.Scatter(x=part["length"].to_list(), y=part["expected_share"].to_list(), mode="lines",
                                 name=f"{name}: geometric", line={"color": colour, "width": 1.5, "dash": "dot"},
                                 hovertemplate=f"{name} length %{{x}}: expected %{{y:.3%}}<extra></extra>"))
        fig.add_trace(go.Scatter(x=part["length"].to_list(), y=part["share"].to_list(), mode="markers",
                                 name=f"{name}: observed", marker={"color": colour, "size": 8},
                                 customdata=part["streaks"].to_list(),
                                 hovertemplate=(f"{name} length %{{x}}: %{{y:.3%}} "
                                                "(%{customdata:,} streaks)<extra></extra>")))
    longest = streaks["length"].max() if streaks.height else None
    fig.update_xaxes(title_text="streak length", dtick=1 if streaks.height < 40 else None, gridcolor=GRID,
                     range=[0.5, longest + 0.5] if longest else None)  # no tick at 0: no streak is that short
    fig.update_yaxes(type="log", title_text="share of streaks (log scale)", gridcolor=GRID, exponentformat="power",
                     dtick=1)
    return styled(fig, height=500)


def pattern_chart(patterns: pl.DataFrame) -> go.Figure:
    """P(next result = Banker | condition), as a bar up or down from the unconditional rate, with its
    95 % interval; orange where |z| > 2 (expect about 1 in 20 of them by chance alone)."""
    order = {c: i for i, c in enumerate(CONDITIONS)}
    frame = (patterns.with_columns(_c=pl.col("condition").replace_strict(order, default=len(order)))
             .sort("_c", "pattern"))
    rows = list(frame.iter_rows(named=True))
    fig = go.Figure()
    if not rows:
        return styled(fig)
    p0 = rows[0]["p_unconditional"]
    x = [[CONDITIONS.get(r["condition"], r["condition"]) for r in rows], [r["pattern"] for r in rows]]
    strong = [r["z_score"] is not None and abs(r["z_score"]) > 2 for r in rows]
    half = [Z95 * math.sqrt(p0 * (1 - p0) / r["observations"]) if r["observations"] else 0.0 for r in rows]
    custom = [(r["observations"], r["next_banker"], r["z_score"] or 0.0) for r in rows]
    fig.add_trace(go.Bar(
        x=x, y=[r["p_next_banker"] - p0 for r in rows], base=p0, name="P(next = Banker)",
        marker={"color": [HIGHLIGHT if s else "#7b8794" for s in strong], "line": {"width": 0}},
        hoverinfo="skip",
    ))
    fig.add_trace(go.Scatter(
        x=x, y=[r["p_next_banker"] for r in rows], mode="markers", name="95 % interval", showlegend=True,
        marker={"size": 5, "color": INK},
        error_y={"type": "data", "array": half, "color": INK, "thickness": 1.2, "width": 3},
        customdata=custom,
        hovertemplate=("%{x}<br>P(next = Banker) %{y:.2%}<br>%{customdata[1]:,} of %{customdata[0]:,}"
                       "<br>z = %{customdata[2]:+.2f}<extra></extra>"),
    ))
    fig.add_hline(y=p0, line={"color": INK, "width": 1.5, "dash": "dash"})
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name=f"unconditional {p0:.2%}",
                             line={"color": INK, "width": 1.5, "dash": "dash"}))
    fig.add_trace(go.Bar(x=[None], y=[None], name="|z| > 2", marker_color=HIGHLIGHT))
    fig.update_layout(bargap=0.25)
    low = min(r["p_next_banker"] - h for r, h in zip(rows, half))
    high = max(r["p_next_banker"] + h for r, h in zip(rows, half))
    pad = (high - low) * 0.05
    fig.update_yaxes(tickformatstops=PERCENT_TICKS, title_text="P(next = Banker)", gridcolor=GRID,
                     range=[max(0.0, low - pad), min(1.0, high + pad)])
    fig.update_xaxes(tickfont={"size": 10})
    return styled(fig, height=400, margin={"l": 60, "r": 20, "t": 40, "b": 70})
