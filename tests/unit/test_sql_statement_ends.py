"""`baccarat sql < script.sql` ran `SELECT outcome, -- the side;` alone, the moment a line ended in ';', and
failed twice (exit 2) where the script held one good statement: the prompt took any line ending in ';'
for a statement's end, a ';' in a comment or in a string running over lines too; and `SELECT 1; -- note`
at the prompt waited for more. A statement now ends at a ';' DuckDB's tokenizer finds. And a line `.quit`
inside a script's string ended the script."""

import io

import duckdb
import pytest

from pipeline.marts import shell
from pipeline.marts.bounds import Bounds
from pipeline.marts.statements import ends_a_statement


@pytest.mark.parametrize(("script", "shown"), [
    ("SELECT 'B' AS outcome, -- the side;\n  2 AS n;\nSELECT 3 AS c;\n", ["outcome", "n", "B", "2", "c", "3"]),
    ("SELECT 'a;\nb' AS s;\nSELECT 2 AS two;\n", ["s", '"a;', 'b"', "two", "2"]),
    ("SELECT 1 AS a /* a note;\n */;\nSELECT 2 AS b;\n", ["a", "1", "b", "2"]),
    ("SELECT 1 AS a; -- a note after the end\nSELECT 2 AS b;\n", ["a", "1", "b", "2"]),
])
def test_a_semicolon_ending_a_line_in_a_comment_or_a_string_ended_the_statement(monkeypatch, capsys, script, shown):
    monkeypatch.setattr("sys.stdin", io.StringIO(script))
    assert shell.prompt(duckdb.connect(), Bounds(timeout=60)) == 0, capsys.readouterr().err
    captured = capsys.readouterr()
    assert (captured.out.split(), captured.err) == (shown, "")


@pytest.mark.parametrize(("text", "ends"), [
    ("SELECT 1;", True),
    ("SELECT 1 ;  ", True),
    ("SELECT 1; -- a note", True),
    ("SELECT 1; /* a note */", True),
    ("SELECT 1; /* a note still open", False),
    ("SELECT 1 /*/", False),
    ("SELECT 1, -- the first;", False),
    ("SELECT 'a;", False),
    ('SELECT "a;', False),
    ("SELECT $$a;", False),
    ("SELECT 1", False),
    ("", False),
    ("SELECT 'caf\udcff';", True),  # not UTF-8: its own ';' ends it, and the statement's error is its own
])
def test_where_a_statement_ends(text, ends):
    assert ends_a_statement(text) is ends



def test_a_line_quit_inside_a_string_of_a_script_ended_the_script_with_nothing_run(monkeypatch, capsys):
    """A script whose string ran over a line holding `.quit` stopped there, silently and with status 0,
    running neither that statement nor the ones after it: in a script a line leaves only where a
    statement would start."""
    monkeypatch.setattr("sys.stdin", io.StringIO("SELECT 'one\n.quit\n' AS s;\nSELECT 2 AS b;\n.quit\nSELECT 3 AS c;\n"))
    assert shell.prompt(duckdb.connect(), Bounds(timeout=60)) == 0
    assert capsys.readouterr().out.split() == ["s", '"one', ".quit", '"', "b", "2"]
