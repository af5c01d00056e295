"""Roads as people read them: the JSON document of one shoe, and a terminal drawing."""

import pyarrow as pa
from rich.console import Group
from rich.panel import Panel
from rich.text import Text

from pipeline.marts.roads_duckdb import DERIVED_ROADS, ROADS

_COLOURS = {"B": "red", "P": "blue", "T": "green", "red": "red", "blue": "blue"}
_SYMBOLS = {"bead_plate": "●", "big_road": "○", "big_eye_boy": "○", "small_road": "●", "cockroach_pig": "╱"}


def roads_document(cells: pa.Table, shoe_id: int = 0) -> dict:
    """The five roads of one shoe in the documented JSON shape."""
    rows = [row for row in cells.to_pylist() if row["shoe_id"] == shoe_id]
    by_road = {road: [row for row in rows if row["road"] == road] for road in ROADS}
    document = {
        "bead_plate": [{"outcome": r["mark"], "col": r["col"], "row": r["row"]} for r in by_road["bead_plate"]],
        "big_road": [{"outcome": r["mark"], "col": r["col"], "row": r["row"], "ties": r["ties"],
                      "draw_col": r["draw_col"], "draw_row": r["draw_row"]} for r in by_road["big_road"]],
    }
    for road in DERIVED_ROADS:
        document[road] = [r["mark"] for r in by_road[road]]
    return document


def board(cells: pa.Table, shoe_id: int = 0) -> Group:
    """The five roads drawn on 6-row grids, as on a casino's display."""
    rows = [row for row in cells.to_pylist() if row["shoe_id"] == shoe_id]
    panels = []
    for road in ROADS:
        grid: dict[tuple[int, int], Text] = {}
        for r in rows:
            if r["road"] == road:
                symbol = "⊘" if r["ties"] else _SYMBOLS[road]
                grid[(r["draw_row"], r["draw_col"])] = Text(symbol, style=_COLOURS[r["mark"]])
        width = max((col for _, col in grid), default=-1) + 1
        lines = [Text(" ").join(grid.get((line, col), Text("·", style="dim")) for col in range(width))
                 for line in range(6)]
        panels.append(Panel(Text("\n").join(lines), title=road.replace("_", " "), title_align="left", expand=False))
    return Group(*panels)
