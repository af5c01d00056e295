"""Roads as people read them: the JSON document of one shoe, and a terminal drawing."""

import pyarrow as pa
from rich.console import Group
from rich.panel import Panel
from rich.text import Text

from pipeline.marts.roads_duckdb import DERIVED_ROADS, ROADS

_COLOURS = {"B": "red", "P": "blue", "T": "green", "red": "red", "blue": "blue"}
# Readable without colour too (a pipe, a log, a colour-blind reader): the bead plate and the big road
# show the result's letter (lower case on a big-road cell that carries ties); the derived roads show
# red as a filled and blue as a hollow mark.
_DERIVED_SYMBOLS = {"big_eye_boy": {"red": "●", "blue": "○"}, "small_road": {"red": "■", "blue": "□"},
                    "cockroach_pig": {"red": "╱", "blue": "╲"}}
LEGEND = ("B banker, P player, T tie; big road: lower case where ties were marked; derived roads: "
          "●■╱ red, ○□╲ blue")


def _symbol(road: str, cell: dict) -> str:
    if road in _DERIVED_SYMBOLS:
        return _DERIVED_SYMBOLS[road][cell["mark"]]
    return cell["mark"].lower() if road == "big_road" and cell["ties"] else cell["mark"]


def roads_document(cells: pa.Table, shoe_id: int = 0) -> dict:
    """The five roads of one shoe in the documented JSON shape."""
    return _document([row for row in cells.to_pylist() if row["shoe_id"] == shoe_id])


def roads_documents(cells: pa.Table, shoes: int) -> list[dict]:
    """roads_document of shoes 0 to shoes - 1, in one pass over the cells."""
    by_shoe: list[list[dict]] = [[] for _ in range(shoes)]
    for row in cells.to_pylist():
        by_shoe[row["shoe_id"]].append(row)
    return [_document(rows) for rows in by_shoe]


def _document(rows: list[dict]) -> dict:
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
                grid[(r["draw_row"], r["draw_col"])] = Text(_symbol(road, r), style=_COLOURS[r["mark"]])
        width = max((col for _, col in grid), default=-1) + 1
        lines = [Text(" ").join(grid.get((line, col), Text("·", style="dim")) for col in range(width))
                 for line in range(6)]
        panels.append(Panel(Text("\n").join(lines), title=road.replace("_", " "), title_align="left", expand=False))
    return Group(*panels, Text(LEGEND, style="dim"))
