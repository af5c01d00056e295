"""What a replaced run, or a run's replaced round_ev or sessions rows, leave behind. `simulate --overwrite`:
the replaced run's marts, round_ev rows and sessions rows describe the old run, so they go. `composition`
and `backtest` in place of a run's earlier rows: the run's composition or system marts describe the earlier
rows, so they go. Then a local warehouse is published again, so that it shows none of them.

Each job removes them twice: before its first commit (drop_replaced_run, drop_stale_marts, its
before_commit), so that a job stopped between its commits and the clean-up (Ctrl-C, kill -9) leaves none of
them beside the new rows, where a rerun finds nothing to do and nothing would remove them; and after its
commits, for marts that a `baccarat marts` which read the earlier rows committed meanwhile."""

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


def drop_replaced_run(out: Store, run_id: str) -> tuple[bool, bool]:
    """The run's marts, round_ev rows and sessions rows removed; whether it had round_ev and sessions rows."""
    drop_marts(out, run_id)
    return (drop_run_rows(out, composition_job.ROUND_EV, run_id, composition_job.Plan.application),
            drop_run_rows(out, backtest_job.SESSIONS, run_id, backtest_job.Plan.application))


def forget_replaced_run(out: Store, run_id: str, dropped: tuple[bool, bool] = (False, False)) -> Forgotten:
    """After `simulate --overwrite` committed a run in place of another: drop_replaced_run again, and a local
    warehouse published again. `dropped`: what drop_replaced_run found before the commits."""
    round_ev, sessions = drop_replaced_run(out, run_id)
    return Forgotten(round_ev or dropped[0], sessions or dropped[1], *_published_again(out))


def drop_stale_marts(out: Store, run_id: str, command: str) -> bool:
    """The run's marts built from `command`'s (composition, backtest) rows removed; whether any held the run."""
    return drop_marts(out, run_id, BUILT_FROM[command])


def forget_stale_marts(out: Store, run_id: str, command: str, dropped: bool = False) -> Forgotten | None:
    """After `command` committed a run's rows: drop_stale_marts again, and a local warehouse published
    again; None when no such mart held the run, now or before the commit (`dropped`)."""
    if not (drop_stale_marts(out, run_id, command) or dropped):
        return None
    return Forgotten(False, False, *_published_again(out))


def _published_again(out: Store) -> tuple[Path | None, list[str]]:
    """OUT's own warehouse published again, with the runs it leaves out; (None, []) where there is none."""
    if not (out.is_local and out.warehouse_path().is_file()):
        return None, []
    return publish_warehouse(out, out.warehouse_path())
