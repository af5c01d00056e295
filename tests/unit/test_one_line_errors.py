"""Every error is one line, whatever it quotes: an --out holding a line break printed a two-line error
(a new user's trial). No JVM."""

import pytest

from pipeline.cli import main


@pytest.mark.parametrize("args", [
    ["runs", "--out", "{tmp}/data\nmore"],  # a path, in the store's own message
    ["sql", "--warehouse", "{tmp}/ware\r\nhouse.duckdb", "SELECT 1"],  # a path, in the warehouse's message
])
def test_a_line_break_in_what_an_error_quotes_is_written_as_an_escape(tmp_path, capsys, args):
    status = main([arg.format(tmp=tmp_path) for arg in args])
    out, err = capsys.readouterr()
    assert (status, out) == (2, "") and err.startswith("error: ") and err.count("\n") == 1, err
    assert "\\n" in err and "\r" not in err
