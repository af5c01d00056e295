"""The report: one self-contained HTML dashboard of a run, built from the published warehouse.

`build_report(out, run_id, shoe_id)` reads DIR/warehouse.duckdb (read-only) and writes
DIR/report/index.html: plotly.js inlined once, every chart a div, no network needed to open it.
"""

from pipeline.report.build import build_report

__all__ = ["build_report"]
