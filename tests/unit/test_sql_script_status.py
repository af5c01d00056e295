"""`echo 'DROP TABLE x;' | baccarat sql` exited 1, against 2 for `baccarat sql 'DROP TABLE x'`: a script on
stdin ended 1 whatever failed. Its status is now its first failure's, as for the statement given as the
argument: refused or bad SQL (and a bad dot command) 2, damaged or missing data 1; each in one line."""

import io

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
])
def test_refused_sql_on_stdin_exited_1_against_2_for_the_argument(monkeypatch, capsys, tmp_path, script, status,
                                                                   errors):
    monkeypatch.setattr("sys.stdin", io.StringIO(script.format(folder=tmp_path)))
    assert shell.prompt(duckdb.connect(), Bounds(timeout=60)) == status
    err = capsys.readouterr().err.splitlines()
    assert len(err) == errors and all(line.startswith("error: ") for line in err)
