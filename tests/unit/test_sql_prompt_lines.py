"""At `baccarat sql`'s prompt on a terminal, Enter on an empty line answered with the continuation prompt
(`     ...> `), as if a statement had begun: none had, and the next prompt is the first line's again."""

import io
import sys

import duckdb

from pipeline.marts import shell
from pipeline.marts.bounds import Bounds


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_an_empty_line_at_the_prompt_began_no_statement(monkeypatch, capsys):
    typed, prompts = iter(["", "   ", "SELECT 1 AS a;", "", "SELECT 2", "AS b;", ".quit"]), []

    def reading(prompt: str) -> str:
        prompts.append(prompt)
        return next(typed)

    monkeypatch.setattr("sys.stdin", _Terminal())
    monkeypatch.setattr("sys.stdout", _Terminal())
    monkeypatch.setattr("builtins.input", reading)
    assert shell.prompt(duckdb.connect(), Bounds(timeout=60)) == 0
    first, more = "baccarat> ", "     ...> "
    assert prompts == [first, first, first, first, first, more, first]
    assert capsys.readouterr().err == ""


def test_the_prompt_went_into_the_rows_where_stdout_was_a_file(monkeypatch, capsys):
    """`baccarat sql > rows.tsv` at a terminal wrote the banner and every `baccarat> ` into the file, ahead of
    the rows, and showed the user no prompt: with stdout not a terminal, they now go to stderr, which is."""
    typed = iter(["SELECT 41 + 1 AS answer;", ".quit"])

    def reading(prompt: str = "") -> str:  # as input() does: the prompt on stdout
        sys.stdout.write(prompt)
        return next(typed)

    monkeypatch.setattr("sys.stdin", _Terminal())
    monkeypatch.setattr("builtins.input", reading)
    con = duckdb.connect()
    con.execute("CREATE TABLE streaks (side VARCHAR)")
    assert shell.prompt(con, Bounds(timeout=60)) == 0
    captured = capsys.readouterr()
    assert captured.out == "answer\n42\n"
    assert "tables streaks" in captured.err and captured.err.endswith("baccarat> baccarat> ")


def test_ctrl_d_left_the_shells_prompt_on_the_line_of_ours(monkeypatch, capsys):
    """Ctrl-D at `baccarat> ` ended the prompt with no newline: the shell's prompt then followed ours on
    the same line. The line ends, as it does after a Ctrl-C."""

    def reading(prompt: str = "") -> str:
        sys.stdout.write(prompt)
        raise EOFError

    monkeypatch.setattr("sys.stdin", _Terminal())
    monkeypatch.setattr("sys.stdout", _Terminal())
    monkeypatch.setattr("builtins.input", reading)
    assert shell.prompt(duckdb.connect(), Bounds(timeout=60)) == 0
    assert sys.stdout.getvalue().endswith("baccarat> \n")
