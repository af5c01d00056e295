"""`.schema Rounds` at `baccarat sql`'s prompt said "no table 'Rounds'" (exit 2 in a script) where `SELECT * FROM
Rounds` reads it: DuckDB finds a table whatever the case of its name, quoted or not, and `.schema` now does too."""

import io

import duckdb
import pytest

from pipeline.marts import shell
from pipeline.marts.bounds import Bounds


@pytest.mark.parametrize("written", ["streaks", "Streaks", "STREAKS", '"streaks"', '"Streaks";'])
def test_schema_of_a_table_named_in_another_case_or_quoted_said_there_was_no_such_table(monkeypatch, capsys, written):
    con = duckdb.connect()
    con.execute("CREATE TABLE streaks (side VARCHAR, length INTEGER)")
    monkeypatch.setattr("sys.stdin", io.StringIO(f".schema {written}\n"))
    assert shell.prompt(con, Bounds(timeout=60)) == 0, capsys.readouterr().err
    assert capsys.readouterr().out.split() == ["table_name", "column_name", "data_type", "streaks", "side", "VARCHAR",
                                               "streaks", "length", "INTEGER"]
