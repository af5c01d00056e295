"""`--master ''` ran the job on local[*] and `--warehouse ''` (typer's Path('') is the current folder)
was refused as "the warehouse /here is a folder" after `baccarat run` had committed its run; `--temp-directory ''`
spilled into the current folder. Every option taking a path, a URI or a master URL, given an empty
string, is one line, exit 2, and nothing written."""

import pytest
import typer

from pipeline.cli import app

COMMAND = typer.main.get_command(app)
PATH_METAVARS = {"PATH", "PATH|URI", "URL", "FOLDER"}
PATH_NAMES = {"--out", "--master", "--warehouse", "--page", "--output", "--temp-directory", "--path", "--input",
              "--write-strategies"}
# What each command needs besides the option tried, so that only the option tried can be refused.
REQUIRED = {"simulate": ["--shoes", "5", "--seed", "1"], "composition": ["--run-id", "r"],
            "backtest": ["--run-id", "r", "--systems", "flat_banker"], "sql": ["SELECT 1"]}


def commands(command=COMMAND, words=()):
    for name, sub in getattr(command, "commands", {}).items():
        yield from commands(sub, (*words, name)) if hasattr(sub, "commands") else [((*words, name), sub)]


PATH_OPTIONS = [(words, option) for words, command in commands() for option in command.params
                if option.param_type_name == "option"
                and (option.opts[-1] in PATH_NAMES or getattr(option, "metavar", None) in PATH_METAVARS)]


def test_every_path_option_shows_a_path_in_its_help():
    assert [(words, option.opts[-1], option.metavar) for words, option in PATH_OPTIONS
            if option.metavar not in PATH_METAVARS] == []


@pytest.mark.parametrize(("words", "option"), PATH_OPTIONS, ids=[f"{' '.join(w)} {o.opts[-1]}" for w, o in PATH_OPTIONS])
def test_an_empty_master_or_warehouse_ran_or_wrote_on_defaults(cli, tmp_path, monkeypatch, words, option):
    monkeypatch.chdir(tmp_path)
    status, out, err = cli(*words, *REQUIRED.get(words[-1], []), option.opts[-1], "")
    assert (status, out, err.count("\n")) == (2, "", 1) and err.startswith("error: "), err
    assert "empty" in err, err
    assert list(tmp_path.iterdir()) == []
