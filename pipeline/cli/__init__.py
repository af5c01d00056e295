"""`baccarat`: the one command line. Each command parses its options, calls the library and prints for
people; the modules that load Spark, DuckDB, Polars or the numba kernels load inside the commands that
use them, so `baccarat --help`, `odds`, `solve` and `risk` start without them."""

from pipeline.cli import analytics, bi, exact, jobs, store
from pipeline.cli.app import app, console, main

# In the order `baccarat --help` lists them.
for _command in (exact.odds, exact.solve, jobs.simulate, jobs.composition, jobs.backtest, analytics.marts, analytics.roads,
                 analytics.report, jobs.run):
    app.command()(_command)
app.command(context_settings={"ignore_unknown_options": True})(analytics.sql)  # "-- a comment\nSELECT 1" is a query
for _command in (store.docs, store.runs, store.verify, store.vacuum, exact.risk):
    app.command()(_command)
app.add_typer(bi.bi, name="bi")

__all__ = ["app", "console", "main"]
