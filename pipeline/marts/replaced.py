"""What `simulate --overwrite` leaves behind about the run it replaced: that run's marts and round_ev
rows describe the old run, so they go, and a local warehouse is published again, so that neither shows
the old run's figures nor names its files."""

from dataclasses import dataclass
from pathlib import Path

from pipeline.composition.job import drop_round_ev
from pipeline.marts.publish import drop_marts, publish_warehouse
from pipeline.storage import Store


@dataclass(frozen=True)
class Forgotten:
    round_ev: bool  # whether the run had round_ev rows
    warehouse: Path | None  # the local warehouse published again, None when there is none
    left_out: list[str]  # the other runs the warehouse leaves out, each with its reason


def forget_replaced_run(out: Store, run_id: str) -> Forgotten:
    drop_marts(out, run_id)
    round_ev = drop_round_ev(out, run_id)
    if not (out.is_local and out.warehouse_path().is_file()):
        return Forgotten(round_ev, None, [])
    warehouse, left_out = publish_warehouse(out, out.warehouse_path())
    return Forgotten(round_ev, warehouse, left_out)
