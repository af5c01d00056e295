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


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    nullable: bool
    description: str

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
    order_by: tuple[str, ...]
    columns: tuple[dict, ...]

    def resolved(self, bets: tuple[str, ...] = (), decisions: bool = False) -> list[Column]:
        """Columns in order, with one `net_{bet}` column per bet of the rule set, and the columns
        marked `decisions` (the players' choices) only for a game with options."""
        out = []
        for spec in self.columns:
            if spec.get("decisions") and not decisions:
                continue
            names = [spec["name"].format(bet=bet) for bet in bets] if spec.get("per_bet") else [spec["name"]]
            for position, name in enumerate(names):
                description = spec["description"].format(bet=bets[position]) if spec.get("per_bet") else spec["description"]
                out.append(Column(name, spec["type"], spec["nullable"], description))
        return out

    def arrow(self, bets: tuple[str, ...] = (), decisions: bool = False) -> pa.Schema:
        return pa.schema([pa.field(c.name, c.arrow_type, nullable=c.nullable) for c in self.resolved(bets, decisions)])

    def table_schema(self, bets: tuple[str, ...]) -> pa.Schema:
        """The schema of the Delta table holding every run: the run_id partition column first, a net
        column for each of `bets` (every kind), nullable since a run's files hold its own bets only, and
        the decision columns, which the files of a run without options do not hold."""
        fields = [f.with_nullable(True) if f.name.startswith("net_") else f for f in self.arrow(bets, True)]
        if "run_id" not in self.arrow().names:
            fields.insert(0, pa.field("run_id", pa.string(), nullable=False))
        return pa.schema(fields)


def read_contract(source: Traversable | Path, name: str) -> Contract:
    """A contract from its YAML file."""
    document = read_yaml(source, f"schema {name!r}")
    return Contract(
        document["name"], document["description"], document["table"],
        tuple(document["order_by"]), tuple(document["columns"]),
    )


@cache
def contract(name: str) -> Contract:
    """A shipped contract, schemas/<name>.yaml."""
    return read_contract(resource("schemas", f"{name}.yaml"), name)
