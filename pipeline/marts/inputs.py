"""Committed runs as mart inputs: verified against their runs row and the data contracts,
with the exact reference values both engines compare against."""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from functools import cached_property

import pyarrow as pa

from pipeline.bets import BET_KINDS
from pipeline.errors import BaccaratError
from pipeline.exact import BetOdds, exact_odds
from pipeline.games.pairs import StrategyPair, checked_pair
from pipeline.games.strategies import shown_name
from pipeline.games.value import pair_value
from pipeline.orphans import orphan_runs, refuse_orphans
from pipeline.play import ENDINGS
from pipeline.repair import ADDED_TABLES, ROUND_EV, SESSIONS, added_problems, refuse_damaged_past
from pipeline.rule_sets import RuleSet
from pipeline.rules import Result
from pipeline.runs import RUNS, DamagedRun, RunRecord, check_run, committed_runs, read_committed_run, read_run
from pipeline.schemas import contract
from pipeline.systems import SYSTEMS_PLAYED, known_systems, load_system
from pipeline.storage import Store
from pipeline.tasks import part_shoes

MARTS = (
    "outcome_summary", "bet_performance", "payout_variance", "ev_convergence", "streaks",
    "longest_streaks", "shoe_summary", "road_colours", "road_column_lengths", "road_patterns", "road_cells",
)
# Built for a run that has round_ev rows (`baccarat composition`); a run without them has no rows there.
COMPOSITION_MARTS = ("advantage_by_depth", "perfect_play", "count_efficiency")
# Built for a run that has sessions rows (`baccarat backtest`); a run without them has no rows there.
SYSTEM_MARTS = ("system_outcomes", "system_edge", "bankroll_paths", "drawdowns")
EVERY_MART = MARTS + COMPOSITION_MARTS + SYSTEM_MARTS
# The marts built from each table another job adds to a run
BUILT_FROM_ADDED = {ROUND_EV: COMPOSITION_MARTS, SESSIONS: SYSTEM_MARTS}
_OUTCOMES = {"B": "banker", "P": "player", "T": "tie"}
NET = contract("rounds").arrow(("banker",)).field("net_banker").type  # every net_ column's type
# A round each outcome of a game with options settles like: its bets (player, banker) pay on the winner alone.
_WON_BY = {"banker": Result(0, 1, 2, 2), "player": Result(1, 0, 2, 2), "tie": Result(0, 0, 2, 2)}


def rated_endings() -> pa.Table:
    """The endings of a complete session in the order system_outcomes lists them: each is a rate."""
    rated = [ending for ending in ENDINGS if ending != "incomplete"]
    return pa.table({"position": pa.array(range(len(rated)), pa.int64()), "ending": pa.array(rated, pa.string())})


@dataclass(frozen=True)
class Reference:
    """The exact figures a run is compared with: each outcome's chance, each bet's EV and variance."""

    outcomes: dict[str, Fraction]  # banker, player, tie
    bets: dict[str, BetOdds]


def fixed_tableau_reference(rule_set: RuleSet) -> Reference:
    odds = exact_odds(rule_set)
    return Reference({name: odds.probability(name) for name in _OUTCOMES.values()}, odds.bets)


def strategy_pair_reference(rule_set: RuleSet, strategies: StrategyPair) -> Reference:
    """The exact value of the pair a run of a game with options played, each bet settled by its terms."""
    value = pair_value(rule_set, rule_set.decks, strategies.player, strategies.banker)
    chances = {"banker": value.banker_wins, "player": value.player_wins,
               "tie": 1 - value.banker_wins - value.player_wins}
    bets = {}
    for kind, terms in rule_set.bets.items():
        nets = {outcome: Fraction(BET_KINDS[kind].settle(terms, result)) for outcome, result in _WON_BY.items()}
        ev = sum(chances[o] * nets[o] for o in chances)
        bets[kind] = BetOdds(ev, sum(chances[o] * nets[o] ** 2 for o in chances) - ev * ev)
    return Reference(chances, bets)


@dataclass(frozen=True)
class RunInput:
    out: Store
    record: RunRecord
    rule_set: RuleSet
    # per table another job adds to the run (round_ev, sessions): its committed files, as the query engines
    # take them, and the SHA-256 their commit recorded (None: none recorded); checked by load_run
    added: Mapping[str, Mapping[str, str | None]]
    tasks_hash: bool = False  # the range tasks check the SHA-256 of the rounds and shoes files they read, not load_run
    # each system's unit and bet as its sessions were played ({name: {"unit", "bet"}}), as their commit
    # recorded them; None for sessions committed before that was recorded
    played: Mapping[str, Mapping[str, str | None]] | None = None

    @property
    def run_id(self) -> str:
        return self.record.run_id

    def files(self, table: str) -> list[str]:
        """The run's files of a table in shoe order, as the query engines take them."""
        return [self.out.reader_path(f.path) for f in self.record.files_of(table)]

    def added_files(self, name: str) -> list[str]:
        """The run's committed files of a table another job adds to it (round_ev by `baccarat composition`,
        sessions by `baccarat backtest`), as the query engines take them; none for a run without such rows."""
        return list(self.added.get(name, {}))

    def round_ev_shoes(self) -> int:
        """How many of the run's first shoes its round_ev rows cover (0: none; a file named otherwise than
        its task names it: every shoe)."""
        return max((held[1] if (held := part_shoes(path)) else self.record.shoes
                    for path in self.added_files(ROUND_EV)), default=0)

    def system_terms(self, names: list[str]) -> pa.Table:
        """Per system named: its stake unit and the exact EV of Banker, Player and the system's own bet
        (null for a system whose rule chooses between Banker and Player). The unit and the bet are the
        shipped system's of that name as its sessions were played (their commit's record; the file as it is
        now for sessions committed before that was recorded): for a system backtested from a file of its
        own, both are null."""
        shipped = set(known_systems())
        played = self.played or {}
        terms = [None if name not in shipped else played.get(name) or load_system(name).played_terms() for name in names]
        evs = {kind: float(odds.ev) for kind, odds in self.reference.bets.items()}
        return pa.table({"system": pa.array(names, pa.string()),
                         "unit": pa.array([Decimal(t["unit"]) if t else None for t in terms], pa.decimal128(18, 2)),
                         "ev_banker": pa.array([evs.get("banker")] * len(names), pa.float64()),
                         "ev_player": pa.array([evs.get("player")] * len(names), pa.float64()),
                         "ev_bet": pa.array([evs.get(t["bet"]) if t and t["bet"] else None for t in terms],
                                            pa.float64())})

    @cached_property
    def strategies(self) -> StrategyPair | None:
        """The strategy pair the run played (a game with options), else None."""
        document = self.record.strategies
        return None if document is None else StrategyPair.from_document(document)

    @cached_property
    def reference(self) -> Reference:
        if self.strategies is None:
            return fixed_tableau_reference(self.rule_set)
        return strategy_pair_reference(self.rule_set, self.strategies)

    def exact_outcomes(self) -> pa.Table:
        return pa.table({"outcome": list(_OUTCOMES),
                         "probability": [float(self.reference.outcomes[name]) for name in _OUTCOMES.values()]})

    def exact_bets(self) -> pa.Table:
        """Each bet's exact EV and SD, and the strategy pair they are the value of (null for a fixed tableau)."""
        bets = list(self.reference.bets)
        names = [None if self.strategies is None else shown_name(getattr(self.strategies, side)) for side in ("player", "banker")]
        return pa.table({"position": list(range(len(bets))), "bet": bets,
                         "ev": [float(self.reference.bets[b].ev) for b in bets],
                         "sd": [self.reference.bets[b].sd for b in bets],
                         "player_strategy": pa.array([names[0]] * len(bets), pa.string()),
                         "banker_strategy": pa.array([names[1]] * len(bets), pa.string())})

    @cached_property
    def counted_partials(self) -> dict[str, pa.Table]:
        """The partials the run's simulation counted while dealing, which no range computes: round_groups
        (as prep_round_groups.sql gives it) when its runs row holds them (pipeline/round_groups.py)."""
        groups = self.record.round_groups
        if groups is None:
            return {}
        columns = list(zip(*groups)) or [()] * (3 + len(self.record.bets))
        nets = {f"net_{bet}": pa.array([Decimal(value) / 100 for value in cents], NET)
                for bet, cents in zip(self.record.bets, columns[3:])}
        return {"round_groups": pa.table({"outcome": pa.array(columns[0], pa.string()),
                                          "streak_index": pa.array(columns[1], pa.int16()), **nets,
                                          "weight": pa.array(columns[2], pa.int64())})}

    def checkpoints(self) -> pa.Table:
        """Log-spaced round counts 1, 2, 5, 10, 20, 50, ... up to the run's rounds, and the rounds."""
        rounds, points, scale = self.record.rounds, set(), 1
        while scale <= rounds:
            points |= {n for n in (scale, 2 * scale, 5 * scale) if n <= rounds}
            scale *= 10
        return pa.table({"rounds": sorted(points | {rounds})})


def load_run(out: Store, run_id: str, tasks_hash: bool = False) -> RunInput:
    """A committed run whose files all exist and follow the contracts, and on a local OUT match their
    checksums, unless `tasks_hash` (Spark tasks: each checks the files it reads, so that no one machine
    reads every byte first). On an object store no rounds or shoes object is opened here: the task that
    fetches one checks it whole, its SHA-256 and its contract (pipeline/marts/partials.py, local_range).
    With the files other jobs added to it, checked here: their sizes, contracts and SHA-256 (but a
    round_ev object's SHA-256 by the tasks that fetch it)."""
    record, rule_set = read_committed_run(out, run_id)
    check_run(out, record, checksums=out.is_local and not tasks_hash, read_files=out.is_local)
    added = {table: _added_files(out, record, table) for table in ADDED_TABLES}
    played = out.commit_record(SESSIONS, run_id, SYSTEMS_PLAYED) if added[SESSIONS] else None
    run = RunInput(out, record, rule_set, added, tasks_hash, played)
    try:
        checked_pair(rule_set, run.strategies)
    except BaccaratError as error:
        raise BaccaratError(f"run {run_id!r}: {error}") from None
    return run


def _added_files(out: Store, record: RunRecord, table: str) -> dict[str, str | None]:
    """The run's committed files of `table` (one of ADDED_TABLES) as RunInput.added holds them, each checked
    against its size in the table's log, the contract and where it is read in place its recorded checksum;
    else DamagedRun naming the file and the repair."""
    files = out.partition_files(table, record.run_id, checksums=True)
    if problems := added_problems(out, record, table, files, hashed=out.is_local or table != ROUND_EV):
        raise DamagedRun(problems[0])
    return {out.reader_path(entry["path"]): entry["sha256"] for entry in files}


def replaced_since_read(run: RunInput) -> tuple[str, ...]:
    """The marts built from rows of the run that another command replaced since load_run read them: every
    mart when `simulate --overwrite` replaced the run, those of its round_ev or sessions rows when
    `composition` or `backtest` replaced them."""
    record = read_run(run.out, run.run_id)
    if record is None or record.files != run.record.files:
        return EVERY_MART
    return tuple(name for table in ADDED_TABLES for name in BUILT_FROM_ADDED[table]
                 if {run.out.reader_path(f["path"]) for f in run.out.partition_files(table, run.run_id)}
                 != set(run.added_files(table)))


def load_runs(out: Store, run_ids: list[str] | None = None, tasks_hash: bool = False) -> list[RunInput]:
    committed = committed_runs(out)
    # a run the runs table lost: refused when named, or when no run is committed (else publish names it)
    orphans = orphan_runs(out, out.run_ids(RUNS))
    named = [orphan for orphan in orphans if orphan.run_id in (run_ids or ())]
    refuse_orphans(out, named or ([] if committed else orphans),
                   f" (the other runs build with {_run_ids(committed)})" if committed else "")
    if not committed:
        raise BaccaratError(f"no committed run in {out} (run `baccarat simulate` first)")
    refuse_damaged_past(out)
    if run_ids:
        return [load_run(out, run_id, tasks_hash) for run_id in dict.fromkeys(run_ids)]
    runs, refusals = [], []
    for run_id in committed:
        try:
            runs.append(load_run(out, run_id, tasks_hash))
        except (BaccaratError, DamagedRun) as error:
            refusals.append(error)
    if refusals:
        raise _refusal(refusals, runs) from None
    return runs


def _refusal(refusals: list[Exception], loaded: list[RunInput]) -> Exception:
    """The first refused run's error, naming the runs that build (not one refused too) and how many more
    are refused; DamagedRun stays a failure of the world, not bad input."""
    notes = [f"the other runs build with {_run_ids(run.run_id for run in loaded)}"] if loaded else []
    if more := len(refusals) - 1:
        notes.append(f"{more:,} more refused: `baccarat verify` names them")
    first = refusals[0]
    kind = DamagedRun if isinstance(first, DamagedRun) else BaccaratError
    return kind(f"{first} ({'; '.join(notes)})" if notes else str(first))


def _run_ids(run_ids: Iterable[str]) -> str:
    """The --run-id options that name `run_ids`."""
    return " ".join(f"--run-id {run_id}" for run_id in run_ids)
