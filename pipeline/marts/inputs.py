"""Committed runs as mart inputs: verified against their manifest and the data contracts,
with the exact reference values both engines compare against."""

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import ValidationError

from pipeline.errors import BaccaratError
from pipeline.exact import Odds, exact_odds
from pipeline.runs import committed_runs, read_manifest, verify_files
from pipeline.schemas import contract
from pipeline.tables import RuleSet

MARTS = (
    "outcome_summary", "bet_performance", "payout_variance", "ev_convergence", "streaks",
    "longest_streaks", "shoe_summary", "road_colours", "road_column_lengths", "road_patterns", "road_cells",
)
ROAD_CELLS_SHOES = 200
ROAD_STATS_SHOES = 10_000
_OUTCOMES = {"B": "banker", "P": "player", "T": "tie"}


@dataclass(frozen=True)
class RunInput:
    out: Path
    manifest: dict
    rule_set: RuleSet

    @property
    def run_id(self) -> str:
        return self.manifest["run_id"]

    def files(self, table: str) -> list[Path]:
        return [self.out / f["path"] for f in self.manifest["files"] if f["table"] == table]

    @cached_property
    def odds(self) -> Odds:
        return exact_odds(self.rule_set)

    def exact_outcomes(self) -> pa.Table:
        return pa.table({"outcome": list(_OUTCOMES),
                         "probability": [float(self.odds.probability(name)) for name in _OUTCOMES.values()]})

    def exact_bets(self) -> pa.Table:
        bets = list(self.odds.bets)
        return pa.table({"position": list(range(len(bets))), "bet": bets,
                         "ev": [float(self.odds.bets[b].ev) for b in bets],
                         "sd": [self.odds.bets[b].sd for b in bets]})

    def checkpoints(self) -> pa.Table:
        """Log-spaced round counts 1, 2, 5, 10, 20, 50, ... up to the run's rounds, and the rounds."""
        rounds, points, scale = self.manifest["rounds"], set(), 1
        while scale <= rounds:
            points |= {n for n in (scale, 2 * scale, 5 * scale) if n <= rounds}
            scale *= 10
        return pa.table({"rounds": sorted(points | {rounds})})


def _check_schema(path: Path, table: str, bets: tuple[str, ...]) -> None:
    expected = contract(table).arrow(bets)
    try:
        found = pq.read_schema(path)
    except (OSError, pa.ArrowInvalid) as error:
        raise BaccaratError(f"{path} is not a readable Parquet file: {error}") from None
    for field in expected:
        if field.name not in found.names:
            raise BaccaratError(f"{path}: column {field.name!r} is missing")
        if not found.field(field.name).type.equals(field.type):
            raise BaccaratError(
                f"{path}: column {field.name!r} is {found.field(field.name).type}, expected {field.type}"
            )


def load_run(out: Path, run_id: str) -> RunInput:
    """A committed run whose files all exist, match their checksums and follow the contracts."""
    manifest = read_manifest(out, run_id)
    if manifest is None:
        raise BaccaratError(f"unknown run id {run_id!r}: no manifest in {out / 'manifests'}")
    try:
        rule_set = RuleSet.model_validate(manifest["parameters"]["rules"])
        bets = tuple(manifest["bets"])
        files = manifest["files"]
    except (KeyError, TypeError, ValidationError) as error:
        raise BaccaratError(f"manifest of run {run_id!r} is malformed ({type(error).__name__}: {error})".splitlines()[0]) from None
    run = RunInput(out, manifest, rule_set)
    verify_files(out, manifest)
    for entry in files:
        _check_schema(out / entry["path"], entry["table"], bets)
    return run


def load_runs(out: Path, run_ids: list[str] | None = None) -> list[RunInput]:
    if not out.is_dir():
        raise BaccaratError(f"no output folder {out}")
    committed = committed_runs(out)
    if not committed:
        raise BaccaratError(f"no committed run in {out} (run `baccarat simulate` first)")
    return [load_run(out, run_id) for run_id in (run_ids or committed)]
