"""`--help` of every command reads well on a narrow and a wide terminal."""

import pytest
import typer

from pipeline.cli import app

COMMAND = typer.main.get_command(app)


@pytest.mark.parametrize("columns", [40, 200])
@pytest.mark.parametrize("name", [None, *COMMAND.commands])
def test_flags_read_as_flags_in_every_help(cli, monkeypatch, columns, name):
    monkeypatch.setenv("COLUMNS", str(columns))
    status, out, err = cli(*([name] if name else []), "--help")
    assert status == 0 and err == "" and "Usage: baccarat" in out
    assert "<bool>" not in out and "…" not in out
    command = COMMAND.commands[name] if name else COMMAND
    for option in command.params:
        names = " / ".join([*option.opts, *option.secondary_opts])
        assert names in out, (names, out)  # whole, never cut short



def test_the_marts_help_said_its_master_defaults_to_local_star_but_without_one_no_spark_starts(cli):
    status, out, err = cli("marts", "--help")
    master = next(option for option in COMMAND.commands["marts"].params if option.name == "master")
    assert status == 0 and " ".join(master.help.split()) in " ".join(out.split())
    assert "local[*]" not in master.help and "without it, in this process" in master.help


def test_the_seed_help_says_simulate_requires_one_and_run_defaults_to_1(cli):
    """`simulate` requires --seed while `run` takes 1: each command's help said neither."""
    _, simulate, _ = cli("simulate", "--help")
    _, run, _ = cli("run", "--help")
    simulate, run = " ".join(simulate.split()), " ".join(run.split())
    assert "required" in simulate and "`baccarat run` deals seed 1 when none is given" in simulate
    assert "[default: 1;" in run and "`baccarat simulate` requires one" in run
