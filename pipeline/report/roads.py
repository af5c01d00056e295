"""The five roads of one shoe, drawn as on a casino's board: one 6-row grid per road, stacked."""

import plotly.graph_objects as go
import polars as pl
from plotly.subplots import make_subplots

from pipeline.report.style import BANKER, GRID, INK, MARK_COLOURS, MUTED, PLAYER, SIDE_NAMES, TIE, styled

ROADS = {"bead_plate": "Bead plate", "big_road": "Big road", "big_eye_boy": "Big eye boy",
         "small_road": "Small road", "cockroach_pig": "Cockroach pig"}
ROWS = 6
GAP = 34  # pixels between two roads (room for a road's title)


def cell_size(columns: int) -> int:
    """Pixels per cell: the board fills about 1,240 px, cells between 16 and 26 px."""
    return int(max(16, min(26, 1240 / max(columns, 1))))


def _colours(marks: list[str]) -> list[str]:
    return [MARK_COLOURS.get(m, INK) for m in marks]


def _pair_dots(fig: go.Figure, cells: pl.DataFrame, size: int, row: int) -> None:
    """A red dot top-left for a banker pair, a blue dot bottom-right for a player pair."""
    for flag, colour, offset, name in (("banker_pair", BANKER, -0.33, "banker pair"),
                                       ("player_pair", PLAYER, 0.33, "player pair")):
        part = cells.filter(pl.col(flag).fill_null(False))
        if part.is_empty():
            continue
        fig.add_trace(go.Scatter(
            x=(part["draw_col"] + offset).to_list(), y=(part["draw_row"] + offset).to_list(), mode="markers",
            marker={"size": max(5, size * 0.28), "color": colour, "line": {"width": 1, "color": "white"}},
            customdata=part["round"].to_list(), hovertemplate=f"round %{{customdata}}: {name}<extra></extra>",
        ), row=row, col=1)


def _bead_plate(fig: go.Figure, cells: pl.DataFrame, size: int, row: int) -> None:
    marks = cells["mark"].to_list()
    fig.add_trace(go.Scatter(
        x=cells["draw_col"].to_list(), y=cells["draw_row"].to_list(), mode="markers+text", text=marks,
        marker={"size": size * 0.84, "color": _colours(marks), "line": {"width": 0}},
        textfont={"color": "white", "size": max(8, int(size * 0.42)), "family": "Arial Black, Arial, sans-serif"},
        customdata=list(zip(cells["round"].to_list(), [SIDE_NAMES.get(m, m) for m in marks])),
        hovertemplate="round %{customdata[0]}: %{customdata[1]}<extra></extra>",
    ), row=row, col=1)
    _pair_dots(fig, cells, size, row)


def _big_road(fig: go.Figure, cells: pl.DataFrame, size: int, row: int) -> None:
    marks = cells["mark"].to_list()
    fig.add_trace(go.Scatter(
        x=cells["draw_col"].to_list(), y=cells["draw_row"].to_list(), mode="markers",
        marker={"symbol": "circle-open", "size": size * 0.74, "color": _colours(marks),
                "line": {"width": max(2, size / 9)}},
        customdata=list(zip(cells["round"].to_list(), [SIDE_NAMES.get(m, m) for m in marks], cells["col"].to_list(),
                            cells["row"].to_list(), cells["ties"].to_list())),
        hovertemplate=("round %{customdata[0]}: %{customdata[1]}<br>column %{customdata[2]}, row %{customdata[3]}"
                       "<br>ties marked: %{customdata[4]}<extra></extra>"),
    ), row=row, col=1)
    tied = cells.filter(pl.col("ties") > 0)
    if not tied.is_empty():
        fig.add_trace(go.Scatter(
            x=tied["draw_col"].to_list(), y=tied["draw_row"].to_list(), mode="markers", hoverinfo="skip",
            marker={"symbol": "line-ne", "size": size * 0.8, "color": TIE,
                    "line": {"width": max(2, size / 9), "color": TIE}},
        ), row=row, col=1)
    several = tied.filter(pl.col("ties") > 1)
    if not several.is_empty():
        fig.add_trace(go.Scatter(
            x=(several["draw_col"] + 0.36).to_list(), y=(several["draw_row"] - 0.3).to_list(), mode="text",
            text=several["ties"].cast(pl.String).to_list(), hoverinfo="skip",
            textfont={"color": TIE, "size": max(8, int(size * 0.4)), "family": "Arial Black, Arial, sans-serif"},
        ), row=row, col=1)
    _pair_dots(fig, cells, size, row)


def _derived(fig: go.Figure, cells: pl.DataFrame, size: int, row: int, road: str) -> None:
    marks = cells["mark"].to_list()
    colours = _colours(marks)
    if road == "big_eye_boy":
        marker = {"symbol": "circle-open", "size": size * 0.66, "color": colours, "line": {"width": max(2, size / 10)}}
    elif road == "small_road":
        marker = {"symbol": "circle", "size": size * 0.62, "color": colours, "line": {"width": 0}}
    else:
        marker = {"symbol": "line-ne", "size": size * 0.7, "color": colours, "line": {"width": max(2.5, size / 8),
                                                                                   "color": colours}}
    fig.add_trace(go.Scatter(
        x=cells["draw_col"].to_list(), y=cells["draw_row"].to_list(), mode="markers", marker=marker,
        customdata=list(zip(cells["seq"].to_list(), marks)),
        hovertemplate=f"{ROADS[road]} entry %{{customdata[0]}}: %{{customdata[1]}}<extra></extra>",
    ), row=row, col=1)


def with_rounds(cells: pl.DataFrame, rounds: pl.DataFrame) -> pl.DataFrame:
    """Each bead-plate and big-road cell with its round and pair flags: bead plate seq = round - 1;
    big-road entry k is the k-th round of the shoe that is not a tie."""
    rounds = rounds.sort("round").select("round", "outcome", "player_pair", "banker_pair")
    bead = rounds.with_columns(seq=(pl.col("round").cast(pl.Int64) - 1), road=pl.lit("bead_plate"))
    big = (rounds.filter(pl.col("outcome") != "T").with_row_index("seq")
           .with_columns(pl.col("seq").cast(pl.Int64), road=pl.lit("big_road")))
    keys = pl.concat([bead.select("road", "seq", "round", "player_pair", "banker_pair"),
                      big.select("road", "seq", "round", "player_pair", "banker_pair")])
    return cells.with_columns(pl.col("seq").cast(pl.Int64)).join(keys, on=["road", "seq"], how="left")


def roads_chart(cells: pl.DataFrame, rounds: pl.DataFrame) -> go.Figure:
    """One shoe's five roads (cells of road_cells for one shoe; its rounds for the pair dots)."""
    cells = with_rounds(cells, rounds)
    columns = max(int(cells["draw_col"].max() or 0) + 1, 24) if not cells.is_empty() else 24
    size = cell_size(columns)
    road_px = ROWS * size
    plot_px = len(ROADS) * road_px + (len(ROADS) - 1) * GAP
    fig = make_subplots(rows=len(ROADS), cols=1, subplot_titles=list(ROADS.values()),
                        vertical_spacing=GAP / plot_px)
    for row, road in enumerate(ROADS, start=1):
        part = cells.filter(pl.col("road") == road).sort("seq")
        if road == "bead_plate":
            _bead_plate(fig, part, size, row)
        elif road == "big_road":
            _big_road(fig, part, size, row)
        elif not part.is_empty():
            _derived(fig, part, size, row, road)
    fig.update_xaxes(range=[-0.5, columns - 0.5], tickvals=[c - 0.5 for c in range(columns + 1)], showgrid=True,
                     gridcolor=GRID, showticklabels=False, zeroline=False, showline=True, linecolor=MUTED,
                     mirror=True, fixedrange=True)
    fig.update_yaxes(range=[ROWS - 0.5, -0.5], tickvals=[r - 0.5 for r in range(ROWS + 1)], showgrid=True,
                     gridcolor=GRID, showticklabels=False, zeroline=False, showline=True, linecolor=MUTED,
                     mirror=True, fixedrange=True)
    fig.update_annotations(font={"size": 12, "color": INK}, xanchor="left", x=0)
    if cells.is_empty():
        fig.add_annotation(text="no road cells for this shoe", x=0.5, y=0.5, xref="paper", yref="paper",
                           showarrow=False, font={"color": MUTED, "size": 14})
    return styled(fig, height=plot_px + 40, width=columns * size + 20, showlegend=False,
                  margin={"l": 10, "r": 10, "t": 30, "b": 10})
