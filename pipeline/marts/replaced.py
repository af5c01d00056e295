"""What `simulate --overwrite` leaves behind about the run it replaced: that run's marts, round_ev rows
and sessions rows describe the old run, so they go, and a local warehouse is published again, so that
neither shows the old run's figures nor names its files."""

from dataclasses import dataclass
from pathlib import Path

from pipeline.backtest import job as backtest_job
from pipeline.composition import job as composition_job
from pipeline.jobs import drop_run_rows
from pipeline.marts.publish import drop_marts, publish_warehouse
from pipeline.storage import Store


@dataclass(frozen=True)
class Forgotten:
    round_ev: bool  # whether the run had round_ev rows
    sessions: bool  # whether the run had sessions rows
    warehouse: Path | None  # the local warehouse published again, None when there is none
    left_out: list[str]  # the other runs the warehouse leaves out, each with its reason


def forget_replaced_run(out: Store, run_id: str) -> Forgotten:
    drop_marts(out, run_id)
    round_ev = drop_run_rows(out, composition_job.ROUND_EV, run_id, composition_job.Plan.application)
    sessions = drop_run_rows(out, backtest_job.SESSIONS, run_id, backtest_job.Plan.application)
    if not (out.is_local and out.warehouse_path().is_file()):
        return Forgotten(round_ev, sessions, None, [])
    warehouse, left_out = publish_warehouse(out, out.warehouse_path())
    return Forgotten(round_ev, sessions, warehouse, left_out)
