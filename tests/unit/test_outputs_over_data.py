"""`baccarat report --page`, `bi superset-bundle -o`, `docs --path` and `solve --write-strategies` wrote
where they were given: over a committed data file, a table's Delta log or the warehouse, or beside a
table's files, exit 0, and the store was damaged. An output within a Delta table or over a DuckDB database
is refused in one line, and nothing is changed."""

import duckdb
import pyarrow as pa
import pytest
from deltalake import write_deltalake

COMMANDS = {"report": ["report", "--page"], "bundle": ["bi", "superset-bundle", "-o"], "docs": ["docs", "--path"]}


@pytest.fixture
def data(tmp_path):
    write_deltalake(str(tmp_path / "rounds"), pa.table({"x": [1, 2], "y": [3, 4]}), partition_by=["x"])
    duckdb.connect(str(tmp_path / "warehouse.duckdb")).close()
    return tmp_path


def _contents(folder) -> dict:
    return {path: path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("target", ["data file", "log", "new file in a table", "warehouse"])
def test_an_output_over_a_committed_file_or_the_warehouse_replaced_it(cli, data, command, target):
    path = {"data file": next((data / "rounds").rglob("*.parquet")),
            "log": data / "rounds" / "_delta_log" / "00000000000000000000.json",
            "new file in a table": data / "rounds" / "x=1" / "page.html",
            "warehouse": data / "warehouse.duckdb"}[target]
    before = _contents(data)
    status, out, err = cli(*COMMANDS[command], path, *(["--out", data] if command != "docs" else []))
    assert (status, out) == (2, "") and err.count("\n") == 1, err
    expected = "is a DuckDB database" if target == "warehouse" else f"is within the Delta table {data / 'rounds'}"
    assert expected in err
    assert _contents(data) == before


@pytest.mark.parametrize("folder", [".", "x=1", "new"])
def test_solve_wrote_its_strategies_into_a_delta_table(cli, data, folder):
    before = _contents(data)
    status, out, err = cli("solve", "--rules", "chemin_de_fer", "--decks", "infinite", "--write-strategies",
                           data / "rounds" / folder)
    assert (status, out) == (2, "") and err.count("\n") == 1
    assert f"is within the Delta table {data / 'rounds'}" in err
    assert _contents(data) == before and not (data / "rounds" / "new").exists()


@pytest.mark.parametrize(("given", "said"), [("{tmp}", "is a folder"), ("{tmp}/notes.txt", "not a DuckDB database"),
                                             ("{tmp}/data/rounds/w.duckdb", "is within the Delta table"),
                                             ("{tmp}/q?x/w.duckdb", "whose path holds '?'")])
def test_run_with_a_warehouse_it_cannot_publish_dealt_and_committed_the_run_first(cli, tmp_path, given, said):
    """`baccarat run --warehouse /tmp` committed the run, then refused the folder: a bad input that
    wrote. The warehouse is checked before Spark starts (this tier has no JVM), and nothing is written."""
    write_deltalake(str(tmp_path / "data" / "rounds"), pa.table({"x": [1]}))
    (tmp_path / "notes.txt").write_text("kept\n")
    before = _contents(tmp_path)
    status, out, err = cli("run", "--shoes", 5, "--out", tmp_path / "data", "--warehouse",
                           given.format(tmp=tmp_path))
    assert (status, out) == (2, "") and err.count("\n") == 1 and said in err, err
    assert _contents(tmp_path) == before
