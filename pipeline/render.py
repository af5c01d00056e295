"""Tables for people. On a terminal, rich's boxed tables, a cell too wide folding onto the next line; anywhere else (a pipe, a file, a cron log) plain
text with every cell complete, columns padded to their widest cell, since nothing there can scroll a
cut cell back into view."""

import sys
from dataclasses import dataclass, field

from rich.console import Console
from rich.table import Table


@dataclass(frozen=True)
class TextTable:
    """A titled grid of strings; the columns named in `left` align left, the others right."""

    title: str
    columns: tuple[str, ...]
    rows: list[tuple[str, ...]] = field(default_factory=list)
    left: frozenset[str] = frozenset()

    def add(self, *cells: str) -> None:
        self.rows.append(tuple(cells))


def show(*tables: TextTable) -> None:
    """Print the tables on stdout: boxed on a terminal, plain and complete otherwise."""
    if sys.stdout.isatty():
        console = Console()
        for table in tables:
            console.print(_boxed(table))
        return
    for table in tables:
        print(plain(table))


def plain(table: TextTable) -> str:
    """The title, then the header and the rows, columns two spaces apart; no cell is ever cut."""
    grid = [table.columns, *table.rows]
    widths = [max(len(row[i]) for row in grid) for i in range(len(table.columns))]
    lines = ["  ".join(cell.ljust(width) if name in table.left else cell.rjust(width)
                       for cell, width, name in zip(row, widths, table.columns)).rstrip()
             for row in grid]
    return "\n".join([table.title, *lines])


def _boxed(table: TextTable) -> Table:
    boxed = Table(title=table.title)
    for name in table.columns:
        boxed.add_column(name, justify="left" if name in table.left else "right", overflow="fold")
    for row in table.rows:
        boxed.add_row(*row)
    return boxed
