"""The data dictionary: docs/tables.md, generated from the data contracts in schemas/*.yaml.

`data_dictionary()` renders every contract file the package ships (a new file appears
without a change here); `write_dictionary(path)` writes it only when it differs, for
`baccarat docs`.
"""

from importlib.resources.abc import Traversable
from pathlib import Path

from pipeline.bets import BET_KINDS
from pipeline.config_files import resource
from pipeline.marts.inputs import MARTS
from pipeline.marts.publish import PER_SHOE_MARTS
from pipeline.schemas import Contract, read_contract

TITLE = "Data dictionary"
BET = "<bet>"  # stands for the bet kind in the name and description of a per-bet column
COUNT = "<count>"  # stands for the count system's name in a per-count column
_VIEWS = ("rounds", "shoes")  # run tables: Delta tables, views in a local warehouse.duckdb


def data_dictionary(folder: Traversable | Path | None = None) -> str:
    """Markdown describing every table whose contract is in `folder` (default: the shipped schemas/)."""
    contracts = _contracts(resource("schemas") if folder is None else folder)
    lines = [
        f"# {TITLE}",
        "",
        ("Generated from the data contracts in `schemas/*.yaml` by `baccarat docs`; do not edit by hand: "
         "change the schema, then run `baccarat docs` to regenerate this file."),
        "",
        "## Contents",
        "",
        *(f"- [{c.name}](#{c.name}): {_text(c.description)}" for c in contracts),
        "- [Bet kinds](#bet-kinds)",
        "",
        ("Tables live under the output location of `baccarat simulate` and `baccarat marts` (`--out`, a "
         "local folder or an object-store URI, default `data`). Each is a Delta Lake table partitioned by "
         "`run_id`: a run's rows are in its `run_id=<run>/` folder, and exist once a commit in the table's "
         "`_delta_log/` adds them; the pipeline's readers take a run once its row in `runs` is committed."),
    ]
    for c in contracts:
        lines += ["", *_section(c)]
    examples = ", ".join(f"`net_{name}`" for name in list(BET_KINDS)[:2])
    lines += ["", "## Bet kinds", "",
              f"A `net_{BET}` row stands for one column per bet, named after its bet kind ({examples}, ...):", ""]
    lines += [f"- `{name}`: {_text(kind.description)}" for name, kind in BET_KINDS.items()]
    lines += ["", ("A run's `rounds` and `shoes` files have a column for each bet its rule set offers; the "
                   "Delta tables, and the `rounds` and `shoes` views in `warehouse.duckdb`, have a column for "
                   "every bet kind (null for a run whose rule set lacks one), and so do the marts.")]
    return "\n".join(lines) + "\n"


def write_dictionary(path: Path) -> bool:
    """Write the dictionary to `path` unless it already holds it; True when the file changed."""
    text = data_dictionary()
    if path.is_file() and path.stat().st_size == len(text.encode()) and path.read_text(encoding="utf-8") == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as file:
        file.write(text)
    return True


def _contracts(folder: Traversable | Path) -> list[Contract]:
    """Every contract file in the folder: rounds, shoes, the marts in MARTS order, then the rest by name."""
    files = {f.name.removesuffix(".yaml"): f for f in folder.iterdir() if f.name.endswith(".yaml") and f.is_file()}
    first = [name for name in (*_VIEWS, *MARTS) if name in files]
    rest = sorted(set(files) - set(first))
    return [read_contract(files[name], name) for name in first + rest]


def _section(c: Contract) -> list[str]:
    where = f"Delta table `{c.table}/`, partitioned by `{c.partition_by}`"
    if c.name in PER_SHOE_MARTS:
        where += (f"; in `warehouse.duckdb` (all committed runs, told apart by `run_id`) a view `{c.name}` over "
                  "the mart's files when OUT is local, a table when it is an object store")
    elif c.name in MARTS:
        where += f"; table `{c.name}` in `warehouse.duckdb` (all committed runs, told apart by `run_id`)"
    elif c.name in _VIEWS:
        where += (f"; view `{c.name}` in a local `warehouse.duckdb` over the committed runs' files, "
                  "with a `run_id` column taken from the folder name")
    lines = [
        f"## {c.name}",
        "",
        _text(c.description),
        "",
        f"- Lives in: {where}",
        f"- Key and order: {', '.join(f'`{name}`' for name in c.order_by)}",
        "",
        "| Column | Type | Nullable | Description |",
        "| --- | --- | --- | --- |",
    ]
    # one bet and one count system stand in for all: each spec resolves to exactly one column
    for spec, column in zip(c.columns, c.resolved((BET,), (COUNT,), decisions=True), strict=True):
        description = _text(column.description)
        if spec.get("per_bet"):
            each = ("bet kind, whether or not the run's rule set offers it" if c.name in MARTS
                    else "bet the rule set offers")
            description = f"{description.rstrip('.')}. One column per {each} (see [Bet kinds](#bet-kinds))."
        if spec.get("per_count"):
            description = (f"{description.rstrip('.')}. One column per count system the job computed "
                           "(`--counts`; the shipped ones are in `conf/counts/`).")
        lines.append(f"| `{column.name}` | {column.type} | {'yes' if column.nullable else 'no'} | {description} |")
    return lines


def _text(text: str) -> str:
    """Text for one Markdown line or table cell: whitespace folded, |, *, < and backslashes escaped."""
    text = " ".join(str(text).split())
    for char, escaped in (("\\", "\\\\"), ("|", "\\|"), ("*", "\\*"), ("<", "&lt;")):
        text = text.replace(char, escaped)
    return text
