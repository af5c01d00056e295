"""An option checked by typer's pydantic validation (a choice among names) read "Invalid value for
'--engine': Value error, 'nope' is not one of ...": pydantic's prefix is dropped, so the line reads as
the rest of the command's errors."""

import pytest


@pytest.mark.parametrize(("args", "said"), [
    (["marts", "--engine", "nope"], "error: Invalid value for '--engine': 'nope' is not one of 'duckdb', 'polars'.\n"),
    (["solve", "--rules", "chemin_de_fer", "--banker-sees", "nope"],
     "error: Invalid value for '--banker-sees': 'nope' is not one of 'total', 'cards'.\n"),
])
def test_a_choice_option_said_pydantic_s_value_error(cli, tmp_path, args, said):
    status, out, err = cli(*args, *(["--out", tmp_path] if args[0] == "marts" else []))
    assert (status, out, err) == (2, "", said)
    assert list(tmp_path.iterdir()) == []


BYTE_FF = "\udcff"  # how Python decodes an argument's byte 0xff, which is not UTF-8 (a surrogate escape)


@pytest.mark.parametrize("args", [
    ["runs", "--out", "{tmp}/data" + BYTE_FF],
    ["simulate", "--shoes", "2", "--seed", "1", "--out", "{tmp}/data" + BYTE_FF],
    ["sql", "--warehouse", "{tmp}/warehouse.duckdb", "SELECT 'caf" + BYTE_FF + "'"],
    ["sql", "--warehouse", "{tmp}/warehouse.duckdb", "--temp-directory", "{tmp}/spill" + BYTE_FF, "SELECT 1"],
], ids=["runs --out", "simulate --out", "sql QUERY", "sql --temp-directory"])
def test_an_argument_that_is_not_utf8_ended_in_a_traceback(cli, tmp_path, args):
    """`baccarat runs --out $'/tmp/d\\xff'` ended in pyarrow's UnicodeEncodeError, `baccarat sql $'SELECT \\xff'`
    in DuckDB's TypeError, `--temp-directory $'/tmp/t\\xff'` in a RuntimeError (std::bad_cast): tracebacks,
    exit 1. Such an argument is bad input, named as its bytes, before any work."""
    given = [arg.replace("{tmp}", str(tmp_path)) for arg in args]
    bad = next(arg for arg in given if BYTE_FF in arg)
    status, out, err = cli(*given)
    shown = bad.replace(BYTE_FF, "\\xff")
    assert (status, out, err) == (2, "", f"error: the argument '{shown}' is not UTF-8 text (byte 0xff): paths, "
                                         "names and queries are read as UTF-8\n")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("variable", "args"), [
    ("BACCARAT_SQL_TEMP_DIRECTORY", ["sql", "--warehouse", "{tmp}/warehouse.duckdb", "SELECT 1"]),
    ("BACCARAT_LOG_DIR", ["simulate", "--shoes", "2", "--seed", "1", "--out", "{tmp}/data"]),
])
def test_a_variable_that_is_not_utf8_ended_in_a_traceback(cli, tmp_path, monkeypatch, variable, args):
    """BACCARAT_SQL_TEMP_DIRECTORY=$'/tmp/t\\xff' ended `baccarat sql` in RuntimeError: std::bad_cast, and
    BACCARAT_LOG_DIR=$'/tmp/l\\xff' `baccarat simulate` in py4j's Py4JError (o0.set), exit 1."""
    monkeypatch.setenv(variable, f"{tmp_path}/folder{BYTE_FF}")
    status, out, err = cli(*[arg.replace("{tmp}", str(tmp_path)) for arg in args])
    assert (status, out, err) == (2, "", f"error: the environment variable {variable} '{tmp_path}/folder\\xff' is not "
                                         "UTF-8 text (byte 0xff): paths, names and queries are read as UTF-8\n")
    assert list(tmp_path.iterdir()) == []
