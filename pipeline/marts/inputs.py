"""Committed runs as mart inputs: verified against their runs row and the data contracts,
with the exact reference values both engines compare against."""

from dataclasses import dataclass
from functools import cached_property

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.errors import BaccaratError
from pipeline.exact import Odds, exact_odds
from pipeline.runs import committed_runs, read_committed_run, run_files, verify_files
from pipeline.schemas import contract
from pipeline.storage import Store
from pipeline.tables import RuleSet

MARTS = (
    "outcome_summary", "bet_performance", "payout_variance", "ev_convergence", "streaks",
    "longest_streaks", "shoe_summary", "road_colours", "road_column_lengths", "road_patterns", "road_cells",
)
# Built for a run that has round_ev rows (`baccarat composition`); a run without them has no rows there.
COMPOSITION_MARTS = ("advantage_by_depth", "perfect_play", "count_efficiency")
EVERY_MART = MARTS + COMPOSITION_MARTS
ROAD_CELLS_SHOES = 200
ROAD_STATS_SHOES = 10_000
_OUTCOMES = {"B": "banker", "P": "player", "T": "tie"}


@dataclass(frozen=True)
class RunInput:
    out: Store
    record: dict  # the run's record, from its runs row
    rule_set: RuleSet

    @property
    def run_id(self) -> str:
        return self.record["run_id"]

    def files(self, table: str) -> list[str]:
        """The run's files of a table in shoe order, as the query engines take them."""
        return [self.out.reader_path(f["path"]) for f in run_files(self.record, table)]

    def round_ev_files(self) -> list[str]:
        """The run's committed files of the round_ev table (`baccarat composition`), as the query engines
        take them, each checked against the contract; none for a run without round_ev rows."""
        files = self.out.partition_files(contract("round_ev").table, self.run_id)
        for entry in files:
            _check_schema(self.out, entry["path"], "round_ev", tuple(self.record["bets"]))
        return [self.out.reader_path(entry["path"]) for entry in files]

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
        rounds, points, scale = self.record["rounds"], set(), 1
        while scale <= rounds:
            points |= {n for n in (scale, 2 * scale, 5 * scale) if n <= rounds}
            scale *= 10
        return pa.table({"rounds": sorted(points | {rounds})})


def _check_schema(out: Store, path: str, table: str, bets: tuple[str, ...]) -> None:
    expected = contract(table).arrow(bets)
    where = out.location(path)
    try:
        found = pq.read_schema(out.fs_path(path), filesystem=out.filesystem)
    except (OSError, pa.ArrowInvalid) as error:
        raise BaccaratError(f"{where} is not a readable Parquet file: {error}") from None
    for field in expected:
        if field.name not in found.names:
            raise BaccaratError(f"{where}: column {field.name!r} is missing")
        if not found.field(field.name).type.equals(field.type):
            raise BaccaratError(
                f"{where}: column {field.name!r} is {found.field(field.name).type}, expected {field.type}"
            )


def load_run(out: Store, run_id: str) -> RunInput:
    """A committed run whose files all exist, match their checksums and follow the contracts."""
    record, rule_set = read_committed_run(out, run_id)
    verify_files(out, record)
    for entry in record["files"]:
        _check_schema(out, entry["path"], entry["table"], tuple(record["bets"]))
    return RunInput(out, record, rule_set)


def load_runs(out: Store, run_ids: list[str] | None = None) -> list[RunInput]:
    out.check_readable()
    committed = committed_runs(out)
    if not committed:
        raise BaccaratError(f"no committed run in {out} (run `baccarat simulate` first)")
    if run_ids:
        return [load_run(out, run_id) for run_id in run_ids]
    runs = []
    for run_id in committed:
        try:
            runs.append(load_run(out, run_id))
        except BaccaratError as error:
            others = " ".join(f"--run-id {other}" for other in committed if other != run_id)
            raise BaccaratError(f"{error} (the other runs build with {others})" if others else str(error)) from None
    return runs
