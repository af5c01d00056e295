"""build_report: the only I/O of the report. Reads the published warehouse read-only, the run's row
in `runs` and its shoe's rounds, writes the page under a temporary name, then renames it into place."""

import shlex
from pathlib import Path

import duckdb
import polars as pl

from pipeline.atomic import write_text
from pipeline.errors import BaccaratError, cannot_write
from pipeline.marts.publish import read_shoe_rounds
from pipeline.marts.bounds import Bounds
from pipeline.marts.warehouse import open_warehouse
from pipeline.report.composition import composition_section
from pipeline.report.page import assemble_page
from pipeline.report.systems import systems_section
from pipeline.runs import banque_refusal, check_run, read_run, read_runs
from pipeline.storage import Store

MARTS = {
    "outcome_summary": "SELECT * FROM outcome_summary WHERE run_id = ? ORDER BY outcome",
    "bet_performance": "SELECT * FROM bet_performance WHERE run_id = ?",
    "payout_variance": "SELECT * FROM payout_variance WHERE run_id = ? ORDER BY bet, horizon",
    "ev_convergence": "SELECT * FROM ev_convergence WHERE run_id = ? ORDER BY bet, rounds",
    "streaks": "SELECT * FROM streaks WHERE run_id = ? ORDER BY side, length",
    "road_patterns": "SELECT * FROM road_patterns WHERE run_id = ? ORDER BY condition, pattern",
}
COMPOSITION = {
    "advantage_by_depth": "SELECT * FROM advantage_by_depth WHERE run_id = ? ORDER BY bet, unseen_low",
    "perfect_play": "SELECT * FROM perfect_play WHERE run_id = ? ORDER BY bet",
    "count_efficiency": ("SELECT * FROM count_efficiency WHERE run_id = ? "
                         "ORDER BY count_system, bet, direction, trigger"),
}
SYSTEMS = {
    "system_outcomes": "SELECT * FROM system_outcomes WHERE run_id = ? ORDER BY system",  # endings: in the section
    "system_edge": "SELECT * FROM system_edge WHERE run_id = ? ORDER BY system",
    "bankroll_paths": "SELECT * FROM bankroll_paths WHERE run_id = ? ORDER BY system, after_rounds",
    "drawdowns": "SELECT * FROM drawdowns WHERE run_id = ? ORDER BY system, drawdown_units",
}
SHOE_CELLS = "SELECT * FROM road_cells WHERE run_id = ? AND shoe_id = ? ORDER BY road, seq"
SHOE_ROUND_COLUMNS = ["round", "outcome", "player_pair", "banker_pair"]


def _frame(con: duckdb.DuckDBPyConnection, sql: str, parameters: list) -> pl.DataFrame:
    return con.sql(sql, params=parameters).pl()


def _optional(con: duckdb.DuckDBPyConnection, run_id: str, queries: dict[str, str]) -> dict[str, pl.DataFrame]:
    """The run's composition or system marts, or none: a run without round_ev or sessions rows has no rows
    there, and a warehouse published before these marts existed has no such tables."""
    tables = {name for (name,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    if not set(queries) <= tables:
        return {}
    return {name: _frame(con, sql, [run_id]) for name, sql in queries.items()}


def _newest(out: Store, runs: list[str]) -> str:
    """The run committed last (its ended_at); runs no longer committed count as oldest."""
    ended = {record.run_id: record.ended_at.isoformat() for record in read_runs(out)}
    return max(runs, key=lambda run_id: (ended.get(run_id, ""), run_id))


def _not_in_warehouse(out: Store, run_id: str, committed: bool, path: Path, runs: list[str],
                      warehouse: Path | None) -> BaccaratError:
    """The refusal of a run the warehouse does not hold: one `committed` in OUT has no marts yet, and the line
    names the command that builds them."""
    if not committed:
        return BaccaratError(f"run {run_id!r} is not in the warehouse {path}; it holds: {', '.join(runs)}")
    build = ["baccarat", "marts", "--run-id", run_id, "--out", out.uri,
             *(["--warehouse", str(path)] if warehouse else [])]
    return BaccaratError(f"run {run_id!r} has no marts yet (the warehouse {path} holds: {', '.join(runs)}): "
                         f"`{shlex.join(build)}` builds them")


def build_report(out: Store, run_id: str | None = None, shoe_id: int | None = None,
                 warehouse: Path | None = None, target: Path | None = None) -> Path:
    """Write the page of one run (default: the newest) of the warehouse (default: OUT's) to `target`
    (default: OUT's report/index.html) and return it; the roads are those of `shoe_id` (default: the
    run's first drawn shoe)."""
    path = warehouse or out.warehouse_path()
    target = target or out.report_path()
    given = read_run(out, run_id) if run_id is not None else None
    if given is not None and given.is_banque:
        raise banque_refusal(out, run_id)  # before the warehouse, which never holds one
    bounds = Bounds.given()
    try:
        with open_warehouse(path, bounds) as con, bounds.timed(con):
            runs = [r for (r,) in con.execute("SELECT DISTINCT run_id FROM outcome_summary ORDER BY run_id").fetchall()]
            if not runs:
                raise BaccaratError(f"the warehouse {path} holds no run "
                                    f"(run `baccarat marts --out {shlex.quote(out.uri)}`)")
            if run_id is None:
                run_id = _newest(out, runs)
            elif run_id not in runs:
                raise _not_in_warehouse(out, run_id, given is not None, path, runs, warehouse)
            data = {name: _frame(con, sql, [run_id]) for name, sql in MARTS.items()} \
                | _optional(con, run_id, COMPOSITION) | _optional(con, run_id, SYSTEMS)
            drawn = [s for (s,) in con.execute("SELECT DISTINCT shoe_id FROM road_cells WHERE run_id = ? "
                                               "ORDER BY shoe_id", [run_id]).fetchall()]
            if shoe_id is None:
                shoe_id = drawn[0] if drawn else None
            elif shoe_id not in drawn:
                shown = f"{drawn[0]} to {drawn[-1]}" if drawn else "none"
                raise BaccaratError(f"shoe {shoe_id} of run {run_id!r} is not drawn in road_cells (drawn: {shown};"
                                    " see `baccarat marts --road-cells-shoes`)")
            data["road_cells"] = _frame(con, SHOE_CELLS, [run_id, shoe_id])
    except duckdb.Error as error:
        raise BaccaratError(f"warehouse {path}: {str(error).strip().splitlines()[0]}") from None
    record = given if given is not None else read_run(out, run_id)
    if record is not None and shoe_id is not None:  # the shoe's rounds files are read: hashed first
        check_run(out, record, {f.path for f in record.files_over("rounds", shoe_id, shoe_id + 1)})
    data["shoe_rounds"] = read_shoe_rounds(out, record, shoe_id, SHOE_ROUND_COLUMNS) if record and shoe_id is not None \
        else pl.DataFrame(schema={c: pl.Null for c in SHOE_ROUND_COLUMNS})
    try:
        write_text(Path(target), assemble_page(run_id, record, data, shoe_id,
                                                      composition_section(data) + systems_section(data)))
    except OSError as error:
        raise cannot_write(f"the report {target}", error) from None
    return Path(target)

