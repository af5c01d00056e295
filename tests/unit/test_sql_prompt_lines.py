"""At `baccarat sql`'s prompt on a terminal, Enter on an empty line answered with the continuation prompt
(`     ...> `), as if a statement had begun: none had, and the next prompt is the first line's again."""

import io

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
    monkeypatch.setattr("builtins.input", reading)
    assert shell.prompt(duckdb.connect(), Bounds(timeout=60)) == 0
    first, more = "baccarat> ", "     ...> "
    assert prompts == [first, first, first, first, first, more, first]
    assert capsys.readouterr().err == ""
