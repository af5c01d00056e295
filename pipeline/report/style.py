"""Colours, labels, number formats and the look shared by every chart."""

import plotly.graph_objects as go

BANKER, PLAYER, TIE = "#d62728", "#1f77b4", "#2ca02c"
SIDE_COLOURS = {"B": BANKER, "P": PLAYER, "T": TIE}
SIDE_NAMES = {"B": "Banker", "P": "Player", "T": "Tie"}
MARK_COLOURS = {"B": BANKER, "P": PLAYER, "T": TIE, "red": BANKER, "blue": PLAYER}
BET_COLOURS = {
    "banker": BANKER, "player": PLAYER, "tie": TIE, "banker_pair": "#e377c2", "player_pair": "#17becf",
    "super_six": "#ff7f0e", "either_pair": "#9467bd", "perfect_pair": "#8c564b", "dragon_7": "#bcbd22",
    "panda_8": "#7f7f7f",
}
INK, MUTED, GRID, HIGHLIGHT = "#1f2933", "#9aa5b1", "#e4e7eb", "#ff7f0e"
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif"
Z95 = 1.96
# A percent axis takes as many decimals as the tick step plotly picks needs, so that every label is
# distinct and true however the chart is sized or zoomed: steps are 1, 2 or 5 times a power of ten,
# so each band from 0.7·10^k to 7·10^k holds one decimal count (steps 1 %: 50 %; 0.5 %: 50.5 %).
PERCENT_TICKS = [{"dtickrange": [None if decimals == 6 else 7 * 10.0 ** -(decimals + 3),
                                 None if decimals == 0 else 7 * 10.0 ** -(decimals + 2)],
                  "value": f".{decimals}%"} for decimals in range(7)]


def bet_colour(bet: str) -> str:
    return BET_COLOURS.get(bet, INK)


def bet_label(bet: str) -> str:
    """player_pair -> 'Player pair', dragon_7 -> 'Dragon 7'."""
    return bet.replace("_", " ").capitalize()


def rgba(colour: str, alpha: float) -> str:
    red, green, blue = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({red},{green},{blue},{alpha})"


def styled(fig: go.Figure, height: int = 360, **layout) -> go.Figure:
    """The dashboard look: white plot, small margins, horizontal legend on top."""
    fig.update_layout(
        template="plotly_white", height=height, font={"family": FONT, "size": 12, "color": INK},
        margin={"l": 60, "r": 20, "t": 40, "b": 50}, hoverlabel={"font": {"family": FONT}},
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.01, "x": 0, "xanchor": "left", "font": {"size": 11}},
        paper_bgcolor="rgba(0,0,0,0)", plot_bgcolor="white",
    )
    fig.update_layout(**layout)
    return fig


def bet_menu(bets: list[str], traces_per_bet: int, default: str) -> list[dict]:
    """A dropdown showing one bet's traces at a time (traces grouped by bet, in order)."""
    buttons = []
    for bet in bets:
        visible = [b == bet for b in bets for _ in range(traces_per_bet)]
        buttons.append({"label": bet_label(bet), "method": "update",
                        "args": [{"visible": visible}, {"yaxis.autorange": True}]})
    return [{"buttons": buttons, "active": bets.index(default), "x": 1, "xanchor": "right", "y": 1.02,
             "yanchor": "bottom", "direction": "down", "showactive": True, "bgcolor": "white", "bordercolor": GRID,
             "font": {"size": 11}}]


def default_bet(bets: list[str], preferred: str = "banker") -> str:
    return preferred if preferred in bets else bets[0]


def percent(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value * 100:.{digits}f}\u00a0%".replace("-", "−")


def number(value: float | None, digits: int = 0) -> str:
    return "–" if value is None else f"{value:,.{digits}f}".replace("-", "−")
