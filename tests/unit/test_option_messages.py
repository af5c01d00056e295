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
