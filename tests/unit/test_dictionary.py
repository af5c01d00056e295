"""docs/tables.md is generated from the data contracts and kept in step with them."""

import shutil
from pathlib import Path

import pytest
import yaml

from pipeline.bets import BET_KINDS
from pipeline.config_files import resource
from pipeline.dictionary import data_dictionary, write_dictionary
from pipeline.marts.inputs import MARTS
from pipeline.marts.publish import PER_SHOE_MARTS
from pipeline.schemas import contract

TABLES_MD = Path(__file__).resolve().parents[2] / "docs" / "tables.md"
SCHEMAS = sorted(f.name.removesuffix(".yaml") for f in resource("schemas").iterdir() if f.name.endswith(".yaml"))


def sections(text: str) -> dict[str, str]:
    """The dictionary cut at its second-level headings: heading -> the text under it."""
    return {part.split("\n", 1)[0]: part for part in text.split("\n## ")[1:]}


def test_the_committed_dictionary_is_up_to_date():
    committed = TABLES_MD.read_text(encoding="utf-8") if TABLES_MD.exists() else None
    assert committed == data_dictionary(), (
        "docs/tables.md does not match schemas/*.yaml: run `baccarat docs` to regenerate it"
    )


def test_every_column_of_every_contract_is_described():
    tables = {heading: plain(text) for heading, text in sections(data_dictionary()).items()}
    assert SCHEMAS and set(SCHEMAS) <= set(tables)
    for name in SCHEMAS:
        c, section = contract(name), tables[name]
        assert c.description in section and c.table in section
        expanded = {spec["name"].format(bet=bet): spec["name"].format(bet="<bet>")
                    for spec in c.columns if spec.get("per_bet") for bet in BET_KINDS}
        for column in c.resolved(tuple(BET_KINDS)):
            per_bet = column.name in expanded
            shown = expanded.get(column.name, column.name)
            row = f"| `{shown}` | {column.type} | {'yes' if column.nullable else 'no'} | "
            assert row in section, f"{name}.{column.name} is not in the dictionary"
            if not per_bet:
                assert f"{row}{column.description} |" in section
    for bet, kind in BET_KINDS.items():
        assert f"- `{bet}`: {kind.description}" in tables["Bet kinds"]


def test_tables_come_in_order_rounds_shoes_then_marts_then_the_rest():
    headings = list(sections(data_dictionary()))
    tables = [h for h in headings if h in SCHEMAS]
    expected = [n for n in ("rounds", "shoes", *MARTS) if n in SCHEMAS]
    assert tables == expected + sorted(set(SCHEMAS) - set(expected))
    for name in MARTS:
        kind = "a view" if name in PER_SHOE_MARTS else "table"
        assert f"{kind} `{name}`" in sections(data_dictionary())[name] and "`warehouse.duckdb`" in sections(data_dictionary())[name]


def test_the_dictionary_is_deterministic():
    assert data_dictionary() == data_dictionary()


@pytest.fixture
def schemas_copy(tmp_path):
    """A copy of the shipped schemas/ folder to edit."""
    folder = tmp_path / "schemas"
    shutil.copytree(resource("schemas"), folder)
    return folder


def test_the_dictionary_follows_the_schema_files(schemas_copy):
    assert data_dictionary(schemas_copy) == data_dictionary()

    path = schemas_copy / "streaks.yaml"
    document = yaml.safe_load(path.read_text())
    document["columns"].append({"name": "new_metric", "type": "float64", "nullable": True,
                                "description": "A new metric | with a pipe"})
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    changed = data_dictionary(schemas_copy)
    assert changed != data_dictionary()
    assert "| `new_metric` | float64 | yes | A new metric \\| with a pipe |" in sections(changed)["streaks"]

    new = dict(document, name="zz_new_mart", description="A table nobody wrote yet.",
               table="marts/zz_new_mart")
    (schemas_copy / "zz_new_mart.yaml").write_text(yaml.safe_dump(new, sort_keys=False))
    (schemas_copy / "aa_new_mart.yaml").write_text(yaml.safe_dump(dict(new, name="aa_new_mart"), sort_keys=False))
    headings = list(sections(data_dictionary(schemas_copy)))
    assert headings.index("road_cells") < headings.index("aa_new_mart") < headings.index("zz_new_mart")
    assert "- [zz_new_mart](#zz_new_mart): A table nobody wrote yet." in data_dictionary(schemas_copy)


def test_write_dictionary_reports_whether_the_file_changed(tmp_path):
    target = tmp_path / "docs" / "tables.md"
    assert write_dictionary(target) is True
    assert target.read_text(encoding="utf-8") == data_dictionary()
    assert write_dictionary(target) is False
    target.write_text("stale\n")
    assert write_dictionary(target) is True
    assert target.read_bytes() == data_dictionary().encode()


def plain(text: str) -> str:
    """Markdown text with the dictionary's escapes undone, to compare with the contracts."""
    for char, escaped in (("|", "\\|"), ("*", "\\*"), ("<", "&lt;"), ("\\", "\\\\")):
        text = text.replace(escaped, char)
    return text
