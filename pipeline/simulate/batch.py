"""Shoes dealt by the kernel -> Arrow tables that match schemas/rounds.yaml and shoes.yaml."""

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from pipeline.bets import BET_KINDS, PAIR_STATES, PAIRS_BASIS, RESULT_BASIS, RESULT_STATES, net_cents_table
from pipeline.cards import NO_CARD
from pipeline.games.pairs import StrategyPair, checked_pair
from pipeline.games.strategies import banker_draw_probabilities, player_draw_probabilities
from pipeline.round_groups import RoundGroups, merged_round_groups
from pipeline.rule_sets import RuleSet
from pipeline.schemas import DECISION_CODES, NO_DECISION, OUTCOME_CODES, contract
from pipeline.simulate.kernel import deal_shoes

_OUTCOMES = pa.array(OUTCOME_CODES, type=pa.string())
_DECISIONS = pa.array(DECISION_CODES, type=pa.string())
DICTIONARY_COLUMNS = ("outcome", "player_option", "banker_option")  # few values: dictionary-encoded in transit


@dataclass(frozen=True)
class Dealer:
    """Everything the kernel needs from a rule set (and, in a game with options, the strategy pair it
    plays), as arrays, built once per task."""

    rule_set: RuleSet
    net_tables: np.ndarray
    net_basis: np.ndarray
    player_chances: np.ndarray
    banker_chances: np.ndarray

    @classmethod
    def of(cls, rule_set: RuleSet, strategies: StrategyPair | None = None) -> "Dealer":
        tables = np.zeros((len(rule_set.bets), len(RESULT_STATES)), dtype=np.int64)
        basis = np.empty(len(rule_set.bets), dtype=np.int8)
        for row, (kind, terms) in enumerate(rule_set.bets.items()):
            cents = net_cents_table(kind, terms)
            tables[row, : len(cents)] = cents
            basis[row] = RESULT_BASIS if BET_KINDS[kind].basis == "result" else PAIRS_BASIS
        return cls(rule_set, tables, basis, *draw_chances(rule_set, checked_pair(rule_set, strategies)))

    @property
    def bets(self) -> tuple[str, ...]:
        return tuple(self.rule_set.bets)

    def kernel_arguments(self) -> tuple:
        """deal_shoes' arguments after (seed, first_shoe, shoes)."""
        r = self.rule_set
        return (r.decks, r.burn.enabled, r.burn.ten_value_burns, r.cut_card.cards_from_end,
                r.cut_card.extra_round, self.player_chances, self.banker_chances, r.draw.player_options,
                r.draw.banker_options, self.net_tables, self.net_basis)

    def deal(self, seed: int, first_shoe: int, shoes: int, round_counts: np.ndarray | None = None) \
            -> tuple[pa.Table, pa.Table]:
        """Rounds and shoes tables for shoes first_shoe .. first_shoe + shoes - 1; each round counted
        in `round_counts` (as new_round_counts gives it) when given."""
        counts = self.new_round_counts() if round_counts is None else round_counts
        out = deal_shoes(seed, first_shoe, shoes, *self.kernel_arguments(), counts)
        return self._rounds(*out[:11]), self._shoes(*out[11:])

    def new_round_counts(self) -> np.ndarray:
        """Zero rounds by result state, pair state and streak index (a streak index is below a shoe's
        most rounds, one per four cards)."""
        return np.zeros((len(RESULT_STATES), len(PAIR_STATES), self.rule_set.cards // 4 + 1), dtype=np.int64)

    def round_groups(self, round_counts: np.ndarray) -> RoundGroups:
        """The rounds `round_counts` counted, by outcome, streak index and net cents of each bet (in the
        rule set's order): rows [outcome, streak_index, rounds, *cents], as prep_round_groups.sql groups
        the rounds' columns (states that settle alike merged)."""
        cells = []
        for state, pairs, streak in zip(*np.nonzero(round_counts)):
            cents = np.where(self.net_basis == RESULT_BASIS, self.net_tables[:, state], self.net_tables[:, pairs])
            cells.append((RESULT_STATES[state].winner, int(streak), int(round_counts[state, pairs, streak]),
                          *cents.tolist()))
        return merged_round_groups([cells])

    def _rounds(self, shoe_id, round_no, cards, totals, outcome, flags, cards_left, big_road_column,
                streak_index, nets, decisions) -> pa.Table:
        schema = contract("rounds").arrow(self.bets, decisions=self.rule_set.has_options)
        n = len(shoe_id)
        card_columns = [pa.array(cards[i], mask=cards[i] == NO_CARD) if i in (2, 5) else pa.array(cards[i])
                        for i in range(6)]
        decimal = schema.field(f"net_{self.bets[0]}").type
        net_columns = [pa.Array.from_buffers(decimal, n, [None, pa.py_buffer(nets[b])]) for b in range(len(nets))]
        columns = [
            pa.array(shoe_id), pa.array(round_no), *card_columns,
            pa.array(totals[0]), pa.array(totals[1]),
            pa.DictionaryArray.from_arrays(pa.array(outcome), _OUTCOMES),
            *(pa.array(flags[i]) for i in range(4)),
            pa.array(cards_left), pa.array(big_road_column), pa.array(streak_index), *net_columns,
        ]
        if self.rule_set.has_options:
            columns += [pa.DictionaryArray.from_arrays(pa.array(side, mask=side == NO_DECISION), _DECISIONS)
                        for side in decisions]
        return pa.Table.from_arrays(columns, schema=_with_dictionary_columns(schema))

    def _shoes(self, info: np.ndarray, counts: np.ndarray, net_sums: np.ndarray) -> pa.Table:
        schema = contract("shoes").arrow(self.bets)
        cut_position = np.full(info.shape[1], self.rule_set.cards - self.rule_set.cut_card.cards_from_end, np.int16)
        columns = [
            pa.array(info[0]), pa.array(info[1].view(np.uint64)).cast(schema.field("rng_seed").type),
            pa.array(info[2].astype(np.int8), mask=info[2] == NO_CARD), pa.array(info[3].astype(np.int8)),
            pa.array(info[4].astype(np.int16)), pa.array(info[5].astype(np.int16)),
            pa.array(cut_position), pa.array(info[6].astype(np.int16)),
            *(pa.array(row.astype(np.int16)) for row in counts),
            *(_decimals(schema.field(f"net_{bet}").type, cents) for bet, cents in zip(self.bets, net_sums)),
        ]
        return pa.Table.from_arrays(columns, schema=schema)


def _decimals(decimal: pa.DataType, cents: np.ndarray) -> pa.Array:
    """Integer cents as an Arrow decimal array, built on the 128-bit layout without a copy per value."""
    layout = np.stack([cents, cents >> 63], axis=-1)
    return pa.Array.from_buffers(decimal, len(cents), [None, pa.py_buffer(layout)])


def _with_dictionary_columns(schema: pa.Schema) -> pa.Schema:
    """The outcome and decision columns travel dictionary-encoded (2 or 3 values); read back, they are
    plain strings."""
    for name in DICTIONARY_COLUMNS:
        if (index := schema.get_field_index(name)) >= 0:
            schema = schema.set(index, schema.field(index).with_type(pa.dictionary(pa.int8(), pa.string())))
    return schema


def draw_chances(rule_set: RuleSet, pair: StrategyPair | None) -> tuple[np.ndarray, np.ndarray]:
    """The kernel's chances of drawing: float64[total] for the Player, float64[a, b, column] for the
    Banker; exactly 0 or 1 wherever the table or a pure choice decides."""
    player, banker = (None, None) if pair is None else (pair.player, pair.banker)
    return (player_draw_probabilities(rule_set.draw, player).astype(np.float64),
            banker_draw_probabilities(rule_set.draw, banker).astype(np.float64))
