"""`echo 'DROP TABLE x;' | baccarat sql` exited 1, against 2 for `baccarat sql 'DROP TABLE x'`: a script on
stdin ended 1 whatever failed. Its status is now its first failure's, as for the statement given as the
argument: refused or bad SQL (and a bad dot command) 2, damaged or missing data 1; each in one line."""

import io
import os
import subprocess
import sys

import duckdb
import pytest

from pipeline.marts import shell
from pipeline.marts.bounds import Bounds

MISSING_FILE = "SELECT * FROM read_parquet('{folder}/gone.parquet');\n"


@pytest.mark.parametrize(("script", "status", "errors"), [
    ("DROP TABLE x;\n", 2, 1),
    ("SELECT bogus;\nSELECT 41 + 1 AS answer;\n", 2, 1),
    (".frobnicate\n", 2, 1),
    (MISSING_FILE, 1, 1),
    (MISSING_FILE + "DROP TABLE x;\n", 1, 2),
    ("DROP TABLE x;\n" + MISSING_FILE, 2, 2),
    ("SELECT 41 + 1 AS answer;\n", 0, 0),
    ("SELECT 'caf\udcff';\nSELECT 41 + 1 AS answer;\n", 2, 1),  # byte 0xff on stdin: DuckDB's TypeError
])
def test_refused_sql_on_stdin_exited_1_against_2_for_the_argument(monkeypatch, capsys, tmp_path, script, status,
                                                                   errors):
    monkeypatch.setattr("sys.stdin", io.StringIO(script.format(folder=tmp_path)))
    assert shell.prompt(duckdb.connect(), Bounds(timeout=60)) == status
    err = capsys.readouterr().err.splitlines()
    assert len(err) == errors and all(line.startswith("error: ") for line in err)


def test_a_script_not_in_utf8_ended_in_a_traceback_where_stdin_is_strict(tmp_path):
    """Where stdin decodes strictly (a UTF-8 locale such as en_US.UTF-8, not C), byte 0xff in a script
    ended `baccarat sql` in a UnicodeDecodeError traceback, exit 1, and the statements after it never ran."""
    program = ("import sys, duckdb; from pipeline.marts import shell; from pipeline.marts.bounds import Bounds; "
               "sys.exit(shell.prompt(duckdb.connect(), Bounds(timeout=60)))")
    done = subprocess.run([sys.executable, "-c", program], input=b"SELECT 'caf\xff';\nSELECT 41 + 1 AS answer;\n",
                          capture_output=True, timeout=60, cwd=tmp_path,
                          env=os.environ | {"PYTHONIOENCODING": "utf-8:strict"})
    assert (done.returncode, done.stdout) == (2, b"answer\n42\n"), done.stderr
    assert done.stderr == b"error: the query is not UTF-8 text (byte 0xff)\n"


@pytest.mark.parametrize(("script", "shown", "status"), [
    ("SELECT 1 AS a; SELECT 2 AS b;\n", ["a", "1", "b", "2"], 0),
    ("SELECT 1 AS a; SELECT 2 AS b", ["a", "1", "b", "2"], 0),  # the script's end closes the last
    ("SELECT 'x;y' AS a; -- a comment; not a statement\nSELECT 2 AS b;\n", ["a", "x;y", "b", "2"], 0),
    ("SELECT 1 AS a; DROP TABLE x; SELECT 3 AS c;\n", ["a", "1", "c", "3"], 2),
])
def test_statements_sharing_a_line_showed_the_last_ones_rows_alone(monkeypatch, capsys, script, shown, status):
    """`echo 'SELECT 1; SELECT 2;' | baccarat sql` printed 2 alone, exit 0: DuckDB runs every statement of
    one call and returns the last one's rows. Each statement on a line now runs and shows its own rows."""
    monkeypatch.setattr("sys.stdin", io.StringIO(script))
    assert shell.prompt(duckdb.connect(), Bounds(timeout=60)) == status
    assert capsys.readouterr().out.split() == shown


def test_a_dash_for_the_query_read_as_sql_not_as_stdin(cli, monkeypatch, tmp_path):
    """`baccarat sql - < script.sql` said 'Parser Error: syntax error at or near "-"', exit 2: '-' is stdin to
    cat, psql -f and the DuckDB CLI alike. It now reads the statements from stdin, as no argument does."""
    path = tmp_path / "warehouse.duckdb"
    duckdb.connect(str(path)).close()
    monkeypatch.setattr("sys.stdin", io.StringIO("SELECT 41 + 1 AS answer;\n"))
    assert cli("sql", "--warehouse", path, "-") == (0, "answer\n42\n", "")
