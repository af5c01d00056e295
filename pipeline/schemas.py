"""The data contracts in schemas/*.yaml, as Arrow schemas for writers and readers."""

import re
from dataclasses import dataclass
from functools import cache
from importlib.resources.abc import Traversable
from pathlib import Path

import pyarrow as pa

from pipeline.config_files import read_yaml, resource

_ARROW_TYPES = {
    "int8": pa.int8(), "int16": pa.int16(), "int32": pa.int32(), "int64": pa.int64(),
    "uint64": pa.uint64(), "bool": pa.bool_(), "string": pa.string(), "float64": pa.float64(),
    "timestamp": pa.timestamp("us", tz="UTC"),
}
_DECIMAL = re.compile(r"decimal\((\d+),(\d+)\)")

OUTCOME_CODES = ("B", "P", "T")  # outcome column values 0, 1, 2
DECISION_CODES = ("stand", "draw")  # decision column values 0, 1; NO_DECISION where no option arose
NO_DECISION = -1
SHOE_TOTALS = ("banker_wins", "player_wins", "ties", "naturals", "player_pairs", "banker_pairs",
               "longest_banker_streak", "longest_player_streak", "longest_tie_streak", "big_road_columns")


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    nullable: bool
    description: str
    repeated: bool = False  # one of the columns a per-bet or per-count spec stands for

    @property
    def arrow_type(self) -> pa.DataType:
        if match := _DECIMAL.fullmatch(self.type):
            return pa.decimal128(int(match[1]), int(match[2]))
        return _ARROW_TYPES[self.type]


@dataclass(frozen=True)
class Contract:
    name: str
    description: str
    table: str
    partition_by: str  # the column whose value names a table's partition folder: every table's is run_id
    order_by: tuple[str, ...]
    columns: tuple[dict, ...]

    def resolved(self, bets: tuple[str, ...] = (), counts: tuple[str, ...] = (), *,
                 decisions: bool = False) -> list[Column]:
        """Columns in order: a per-bet spec (`net_{bet}`) gives one column per bet of the rule set, a
        per-count spec (`true_count_{count}`) one per count system, and the columns marked `decisions`
        (the players' choices) are there only for a game with options."""
        out = []
        for spec in self.columns:
            if spec.get("decisions") and not decisions:
                continue
            key = "bet" if spec.get("per_bet") else "count" if spec.get("per_count") else None
            if key is None:
                out.append(Column(spec["name"], spec["type"], spec["nullable"], spec["description"]))
                continue
            for value in bets if key == "bet" else counts:
                out.append(Column(spec["name"].format(**{key: value}), spec["type"], spec["nullable"],
                                  spec["description"].format(**{key: value}), repeated=True))
        return out

    def arrow(self, bets: tuple[str, ...] = (), counts: tuple[str, ...] = (), *, decisions: bool = False) -> pa.Schema:
        return pa.schema([pa.field(c.name, c.arrow_type, nullable=c.nullable)
                          for c in self.resolved(bets, counts, decisions=decisions)])

    def table_schema(self, bets: tuple[str, ...], counts: tuple[str, ...] = ()) -> pa.Schema:
        """The schema of the Delta table holding every run: the run_id partition column first, the
        per-bet columns of `bets` (every kind) and per-count ones of `counts`, nullable since a run's
        files hold its own bets (and count systems) only, and the decision columns, which the files of
        a run without options do not hold."""
        repeated = {c.name for c in self.resolved(bets, counts) if c.repeated}
        fields = [f.with_nullable(True) if f.name in repeated else f for f in self.arrow(bets, counts, decisions=True)]
        if self.partition_by not in self.arrow().names:
            fields.insert(0, pa.field(self.partition_by, pa.string(), nullable=False))
        return pa.schema(fields)


def read_contract(source: Traversable | Path, name: str) -> Contract:
    """A contract from its YAML file."""
    document = read_yaml(source, f"schema {name!r}")
    return Contract(
        document["name"], document["description"], document["table"], document["partition_by"],
        tuple(document["order_by"]), tuple(document["columns"]),
    )


@cache
def contract(name: str) -> Contract:
    """A shipped contract, schemas/<name>.yaml."""
    return read_contract(resource("schemas", f"{name}.yaml"), name)


@cache
def shipped_contracts() -> tuple[Contract, ...]:
    """Every shipped contract, by name."""
    names = sorted(entry.name.removesuffix(".yaml") for entry in resource("schemas").iterdir()
                   if entry.name.endswith(".yaml"))
    return tuple(contract(name) for name in names)
