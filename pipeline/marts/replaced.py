"""What a replaced run, or a run's replaced round_ev or sessions rows, leave behind. `simulate --overwrite`:
the replaced run's marts, round_ev rows and sessions rows describe the old run, so they go. `composition`
and `backtest` in place of a run's earlier rows: the run's composition or system marts describe the earlier
rows, so they go. Then a local warehouse is published again, so that it shows none of them."""

from dataclasses import dataclass
from pathlib import Path

from pipeline.backtest import job as backtest_job
from pipeline.composition import job as composition_job
from pipeline.jobs import drop_run_rows
from pipeline.marts.inputs import COMPOSITION_MARTS, SYSTEM_MARTS
from pipeline.marts.publish import drop_marts, publish_warehouse
from pipeline.storage import Store

# The marts built from each job's rows, by the job's command
BUILT_FROM = {"composition": COMPOSITION_MARTS, "backtest": SYSTEM_MARTS}


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
    return Forgotten(round_ev, sessions, *_published_again(out))


def forget_stale_marts(out: Store, run_id: str, command: str) -> Forgotten | None:
    """After `command` (composition, backtest) committed a run's rows: the run's marts built from its
    earlier rows go, and a local warehouse is published again; None when no such mart held the run."""
    if not drop_marts(out, run_id, BUILT_FROM[command]):
        return None
    return Forgotten(False, False, *_published_again(out))


def _published_again(out: Store) -> tuple[Path | None, list[str]]:
    """OUT's own warehouse published again, with the runs it leaves out; (None, []) where there is none."""
    if not (out.is_local and out.warehouse_path().is_file()):
        return None, []
    return publish_warehouse(out, out.warehouse_path())
