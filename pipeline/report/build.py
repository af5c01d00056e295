"""build_report: the only I/O of the report. Reads the published warehouse read-only and the run's
manifest, writes DIR/report/index.html under a temporary name, then renames it into place."""

from pathlib import Path

import duckdb
import polars as pl

from pipeline.errors import BaccaratError
from pipeline.report.page import assemble_page
from pipeline.marts.publish import WAREHOUSE, open_warehouse
from pipeline.runs import read_manifest, write_atomically

MARTS = {
    "outcome_summary": "SELECT * FROM outcome_summary WHERE run_id = ? ORDER BY outcome",
    "bet_performance": "SELECT * FROM bet_performance WHERE run_id = ?",
    "payout_variance": "SELECT * FROM payout_variance WHERE run_id = ? ORDER BY bet, horizon",
    "ev_convergence": "SELECT * FROM ev_convergence WHERE run_id = ? ORDER BY bet, rounds",
    "streaks": "SELECT * FROM streaks WHERE run_id = ? ORDER BY side, length",
    "road_patterns": "SELECT * FROM road_patterns WHERE run_id = ? ORDER BY condition, pattern",
}
SHOE_CELLS = "SELECT * FROM road_cells WHERE run_id = ? AND shoe_id = ? ORDER BY road, seq"
SHOE_ROUNDS = ("SELECT round, outcome, player_pair, banker_pair FROM rounds "
               "WHERE run_id = ? AND shoe_id = ? ORDER BY round")


def _frame(con: duckdb.DuckDBPyConnection, sql: str, parameters: list) -> pl.DataFrame:
    return con.sql(sql, params=parameters).pl()


def _newest(out: Path, runs: list[str]) -> str:
    """The run committed last (its manifest's ended_at); runs whose manifest is gone count as oldest."""
    def ended(run_id: str) -> str:
        return (read_manifest(out, run_id) or {}).get("ended_at") or ""

    return max(runs, key=lambda run_id: (ended(run_id), run_id))


def build_report(out: Path, run_id: str | None = None, shoe_id: int | None = None) -> Path:
    """Write OUT/report/index.html for one run of OUT/warehouse.duckdb (default: the newest) and
    return its path; the roads are those of `shoe_id` (default: the run's first drawn shoe)."""
    out = Path(out)
    path = out / WAREHOUSE
    try:
        with open_warehouse(out) as con:
            runs = [r for (r,) in con.execute("SELECT DISTINCT run_id FROM outcome_summary ORDER BY run_id").fetchall()]
            if not runs:
                raise BaccaratError(f"the warehouse {path} holds no run (run `baccarat marts --out {out}`)")
            if run_id is None:
                run_id = _newest(out, runs)
            elif run_id not in runs:
                raise BaccaratError(f"run {run_id!r} is not in the warehouse {path}; it holds: {', '.join(runs)}")
            data = {name: _frame(con, sql, [run_id]) for name, sql in MARTS.items()}
            drawn = [s for (s,) in con.execute("SELECT DISTINCT shoe_id FROM road_cells WHERE run_id = ? "
                                               "ORDER BY shoe_id", [run_id]).fetchall()]
            if shoe_id is None:
                shoe_id = drawn[0] if drawn else None
            elif shoe_id not in drawn:
                shown = f"{drawn[0]} to {drawn[-1]}" if drawn else "none"
                raise BaccaratError(f"shoe {shoe_id} of run {run_id!r} is not drawn in road_cells (drawn: {shown};"
                                    " see `baccarat marts --road-cells-shoes`)")
            data["road_cells"] = _frame(con, SHOE_CELLS, [run_id, shoe_id])
            data["shoe_rounds"] = _frame(con, SHOE_ROUNDS, [run_id, shoe_id])
    except duckdb.Error as error:
        raise BaccaratError(f"warehouse {path}: {str(error).strip().splitlines()[0]}") from None
    page = assemble_page(run_id, read_manifest(out, run_id), data, shoe_id)
    target = out / "report" / "index.html"
    write_atomically(target, page)
    return target
