"""Baccarat banque rounds: the compiled loop and the Arrow batch of schemas/banque_rounds.yaml.

Each shoe is shuffled by pipeline.simulate.kernel's xoshiro256** stream for (seed, shoe_id), and
every mixed decision draws from that same stream after the shuffle (kernel.draw_choice, as in
chemin de fer), so a run is deterministic. `decks = 0` deals with replacement instead (the model of
the infinite deck): each card is a uniform draw from the stream, and a "shoe" is
`rounds_per_stream` rounds.

The round follows pipeline.games.banque: deal hand 1, hand 2, Banker, hand 1, hand 2, Banker;
then the third cards of hand 1, hand 2 and the Banker.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal

import numpy as np
import pyarrow as pa
from numba import njit

from pipeline.cards import CODE_VALUES, NO_CARD
from pipeline.games.banque import DEFAULT_POLICY, HANDS, NATURAL_PAID, BanquePolicy, Profile, load_policy, player_strategies
from pipeline.games.banque_counts import profile_for
from pipeline.games.strategies import Strategy, strategy_document
from pipeline.games.value import INFINITE, shoe_of
from pipeline.jobs import JobPlan, Written, new_tag, run_record
from pipeline.rule_sets import RuleSet
from pipeline.rules import NATURAL_MIN, PLAYER_STOOD
from pipeline.runs import BANQUE_ROUNDS, RunRecord, check_run_id
from pipeline.schemas import contract
from pipeline.simulate.kernel import draw_choice, next_below, rng_seed, shuffle
from pipeline.storage import Store
from pipeline.tasks import content_key, part_name, partitions_for, shoe_ranges, write_files

WITH_REPLACEMENT = 0
NO_DECISION, STOOD, DREW = -1, 0, 1
BANKER_WINS, PLAYER_WINS, TIE = 0, 1, 2
OUTCOME_CODES = ("B", "P", "T")
DECISION_CODES = ("stand", "draw")
NET_SCALE = 10**6  # nets in millionths: theta has 4 decimals, the commission 2
TABLE = BANQUE_ROUNDS
SHOES_PER_BATCH = 4096  # a batch of rows in memory at a time
SHOES_PER_TASK = 100_000  # a task and a file


@njit(cache=True)
def deal_banque_shoes(seed, first_shoe, shoes, decks, rounds_per_stream, burn, ten_value_burns, cut_from_end,
                      extra_round, player_options, player_chances, banker_chances):
    """Deal shoes first_shoe .. first_shoe + shoes - 1. One compiled loop, longer than the
    project's 60 lines on purpose: the shoe's state stays in locals numba keeps in registers, which
    calls per card would pass as a dozen arrays.

    Returns (shoe_id, round, cards int8[9, n]: hand 1's three, hand 2's three, the Banker's three,
    NO_CARD where not dealt; totals int8[3, n]; outcomes int8[2, n], each hand against the Banker;
    decisions int8[3, n]: hand 1's and hand 2's option at 5 and the Banker's choice, NO_DECISION
    where none was made, else STOOD or DREW).
    """
    size = decks * 52 if decks > 0 else rounds_per_stream * 9
    cut = size - cut_from_end
    capacity = shoes * (size // 4 + 1)
    shoe_id = np.empty(capacity, dtype=np.int64)
    round_no = np.empty(capacity, dtype=np.int16)
    cards = np.full((9, capacity), NO_CARD, dtype=np.int8)
    totals = np.empty((3, capacity), dtype=np.int8)
    outcomes = np.empty((2, capacity), dtype=np.int8)
    decisions = np.full((3, capacity), NO_DECISION, dtype=np.int8)
    values = CODE_VALUES
    total = np.empty(3, dtype=np.int64)
    natural = np.empty(3, dtype=np.bool_)
    column = np.empty(2, dtype=np.int64)
    n = 0
    for k in range(shoes):
        sid = first_shoe + k
        if decks > 0:
            shoe = np.empty(size, dtype=np.int8)
            for i in range(size):
                shoe[i] = i % 52
            stream = shuffle(shoe, rng_seed(seed, sid))
        else:
            stream = shuffle(np.empty(0, dtype=np.int8), rng_seed(seed, sid))
            shoe = np.empty(size, dtype=np.int8)
            for i in range(size):
                code, stream = next_below(52, stream)
                shoe[i] = code
        p = 0
        if burn and decks > 0:
            burned = values[shoe[0]] if values[shoe[0]] > 0 else ten_value_burns
            p = 1 + burned
        rounds = 0
        cut_round = 0
        while True:
            if decks > 0 and cut_round > 0 and (not extra_round or rounds > cut_round):
                break
            if decks == 0 and rounds == rounds_per_stream:
                break
            for hand in range(3):
                cards[3 * hand, n] = shoe[p + hand]
                cards[3 * hand + 1, n] = shoe[p + 3 + hand]
                total[hand] = (values[cards[3 * hand, n]] + values[cards[3 * hand + 1, n]]) % 10
                natural[hand] = total[hand] >= NATURAL_MIN
            p += 6
            if not natural[2] and not (natural[0] and natural[1]):
                for hand in range(2):
                    column[hand] = NATURAL_PAID
                    if natural[hand]:
                        continue
                    draws, stream = draw_choice(player_chances[hand, total[hand]], stream)
                    if player_options[total[hand]]:
                        decisions[hand, n] = DREW if draws else STOOD
                    column[hand] = PLAYER_STOOD
                    if draws:
                        cards[3 * hand + 2, n] = shoe[p]
                        p += 1
                        column[hand] = values[shoe[p - 1]]
                        total[hand] = (total[hand] + column[hand]) % 10
                draws, stream = draw_choice(banker_chances[total[2], column[0], column[1]], stream)
                decisions[2, n] = DREW if draws else STOOD
                if draws:
                    cards[8, n] = shoe[p]
                    p += 1
                    total[2] = (total[2] + values[shoe[p - 1]]) % 10
            for hand in range(2):
                if (natural[hand] and not natural[2]) or total[hand] > total[2]:
                    outcomes[hand, n] = PLAYER_WINS
                elif total[hand] == total[2]:
                    outcomes[hand, n] = TIE
                else:
                    outcomes[hand, n] = BANKER_WINS
            totals[:, n] = total
            rounds += 1
            shoe_id[n] = sid
            round_no[n] = rounds
            n += 1
            if decks > 0 and cut_round == 0 and p >= cut:
                cut_round = rounds
    return shoe_id[:n], round_no[:n], cards[:, :n], totals[:, :n], outcomes[:, :n], decisions[:, :n]


@dataclass(frozen=True)
class BanqueDealer:
    """A banque rule set and profile, as the kernel's arguments; `decks` 0 deals with replacement."""

    rule_set: RuleSet
    profile: Profile
    decks: int
    rounds_per_stream: int = 64

    def kernel_arguments(self) -> tuple:
        """deal_banque_shoes' arguments after (seed, first_shoe, shoes)."""
        r = self.rule_set
        return (self.decks, self.rounds_per_stream, r.burn.enabled, r.burn.ten_value_burns, r.cut_card.cards_from_end,
                r.cut_card.extra_round, r.draw.player_options, self.profile.player_draw.astype(np.float64),
                self.profile.banker_draw.astype(np.float64))

    def deal(self, seed: int, first_shoe: int, shoes: int) -> pa.Table:
        """The banque_rounds rows of shoes first_shoe .. first_shoe + shoes - 1."""
        shoe_id, round_no, cards, totals, outcomes, decisions = deal_banque_shoes(
            seed, first_shoe, shoes, *self.kernel_arguments())
        schema = contract("banque_rounds").arrow()
        columns = [pa.array(shoe_id), pa.array(round_no)]
        columns += [pa.array(cards[i], mask=cards[i] == NO_CARD) for i in range(len(cards))]
        columns += [pa.array(totals[i]) for i in range(len(totals))]
        columns += [_codes(outcomes[h], OUTCOME_CODES) for h in range(HANDS)]
        columns += [_codes(decisions[i], DECISION_CODES) for i in range(len(decisions))]
        columns += [_decimals(schema.field(name).type, cents) for name, cents in
                    zip(("net_banker", "net_hand1", "net_hand2"), self.nets(outcomes))]
        return pa.Table.from_arrays(columns, schema=schema)

    def nets(self, outcomes: np.ndarray) -> list[np.ndarray]:
        """In millionths of the two stakes together: the Banker's net, then each hand's stake's."""
        share = Decimal(self.rule_set.two_hands.stake_share)
        keep = 1 - Decimal(self.profile.commission.numerator) / self.profile.commission.denominator
        stakes = [int(share * NET_SCALE), NET_SCALE - int(share * NET_SCALE)]
        hands = [np.select([outcomes[h] == PLAYER_WINS, outcomes[h] == BANKER_WINS], [stake, -stake], 0)
                 for h, stake in enumerate(stakes)]
        taken = [np.where(outcomes[h] == BANKER_WINS, int(keep * stake), 0) - np.where(outcomes[h] == PLAYER_WINS, stake, 0)
                 for h, stake in enumerate(stakes)]
        return [sum(taken).astype(np.int64), *(hand.astype(np.int64) for hand in hands)]


def _codes(codes: np.ndarray, names: tuple[str, ...]) -> pa.Array:
    return pa.array(np.array(names, dtype=object)[np.maximum(codes, 0)], type=pa.string(), mask=codes < 0)


def _decimals(decimal: pa.DataType, units: np.ndarray) -> pa.Array:
    layout = np.stack([units, units >> 63], axis=-1)
    return pa.Array.from_buffers(decimal, len(units), [None, pa.py_buffer(layout)])


@dataclass(frozen=True)
class BanqueRun:
    """A banque simulation: `shoes` shoes of `dealer`'s game from run seed `seed`, as run `run_id`."""

    run_id: str
    dealer: BanqueDealer
    seed: int
    shoes: int
    parameters: dict  # what decides the rows: two runs with equal parameters hold equal rows

    @classmethod
    def of(cls, run_id: str | None, rule_set: RuleSet, decks: int | str | None, policy: BanquePolicy,
           strategies: tuple[Strategy, Strategy], seed: int, shoes: int) -> "BanqueRun":
        """A run of `rule_set` from its shoe, another number of decks, or INFINITE (with replacement)."""
        rule_set, shoe = shoe_of(rule_set, decks)
        dealer = BanqueDealer(rule_set, profile_for(rule_set, shoe, policy, strategies)[0],
                              WITH_REPLACEMENT if shoe == INFINITE else shoe)
        parameters = {"rules": rule_set.model_dump(mode="json"), "decks": dealer.decks,
                      "rounds_per_stream": dealer.rounds_per_stream, "banker_policy": policy.model_dump(),
                      "player_strategies": [strategy_document(s) for s in strategies], "seed": seed, "shoes": shoes}
        return cls(run_id or f"{rule_set.name}-s{seed}-n{shoes}", dealer, seed, shoes, parameters)


@dataclass(frozen=True)
class BanquePlan(JobPlan):
    """The job that deals a banque run into OUT/banque_rounds, a range of shoes and a file a task."""

    run: BanqueRun
    out: Store
    partitions: int | None = None  # None: chosen from the cluster's parallelism once Spark is up
    job: str = field(default_factory=new_tag)  # tags this job's temporary files
    tables = (TABLE,)
    application = "baccarat"
    in_runs = True
    overwrite_needed = True

    @property
    def run_id(self) -> str:
        return self.run.run_id

    @property
    def rule_set(self) -> RuleSet:
        return self.run.dealer.rule_set

    @property
    def seed(self) -> int:
        return self.run.seed

    @property
    def shoes(self) -> int:
        return self.run.shoes

    @property
    def what(self) -> str:
        return f"banque run {self.run_id!r}"

    def parameters(self) -> dict:
        return self.run.parameters

    def ranges(self) -> list[tuple[int, int]]:
        return shoe_ranges(self.run.shoes, self.partitions)

    def write_range(self, first: int, last: int, report_batch: Callable[[int, int], None]) -> dict:
        """Deal shoes [first, last) batch by batch into one file of OUT/banque_rounds; runs in a Spark task.
        report_batch(shoes, rounds) hears the range's counts so far after each batch written."""
        run, outcomes = self.run, dict.fromkeys(OUTCOME_CODES, 0)

        def batches():
            for start in range(first, last, SHOES_PER_BATCH):
                rows = run.dealer.deal(run.seed, start, min(SHOES_PER_BATCH, last - start))
                for hand in range(1, HANDS + 1):
                    for entry in rows[f"hand{hand}_outcome"].combine_chunks().value_counts().to_pylist():
                        outcomes[entry["values"]] += entry["counts"]
                yield min(start + SHOES_PER_BATCH, last) - first, (rows,)

        name = part_name(first, last, content_key(run.parameters))
        files = write_files(self.out, run.run_id, name, self.job, self.tables, batches(), report_batch,
                            compression="zstd")
        return {"first_shoe": first, "last_shoe": last - 1, "outcomes": outcomes, "files": files}

    def table_schema(self, table: str) -> pa.Schema:
        return contract(TABLE).table_schema(())

    def result(self, written: Written) -> RunRecord:
        return run_record(self, written)


def default_partitions(shoes: int, parallelism: int) -> int:
    return partitions_for(shoes, parallelism, SHOES_PER_TASK)


def plan_for(out: Store, rule_set: RuleSet, seed: int, shoes: int, run_id: str | None, decks: int | str | None,
             banker_policy: str | None, player_strategy: str | None, partitions: int | None) -> BanquePlan:
    """The plan of a banque run: the Banker's policy by name (default DEFAULT_POLICY), the Players' strategies
    (NAME for both hands or NAME1,NAME2), a checked run id and a writable store."""
    run = BanqueRun.of(run_id, rule_set, decks, load_policy(banker_policy or DEFAULT_POLICY),
                       player_strategies(rule_set, player_strategy), seed, shoes)
    check_run_id(run.run_id)
    return BanquePlan(run, out.check_writable(), partitions)
