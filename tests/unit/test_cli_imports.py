"""The CLI starts without the heavy engines: `baccarat --help`, `odds`, `solve` and `risk` never load
Spark, Delta Lake, DuckDB or Polars; the commands that need them load them when they run."""

import subprocess
import sys

import pytest

HEAVY = ("pyspark", "deltalake", "duckdb", "polars")
LOADED = "import sys; print('loaded:', *(m for m in {heavy!r} if m in sys.modules))"


def heavy_modules_after(code: str) -> list[str]:
    """The heavy modules loaded once `code` ran in a fresh interpreter (this one has loaded them already)."""
    script = f"{code}\n{LOADED.format(heavy=HEAVY)}"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    return done.stdout.splitlines()[-1].split()[1:]  # the command's own output comes before


def test_importing_the_cli_loads_no_spark_delta_duckdb_or_polars():
    assert heavy_modules_after("import pipeline.cli") == []


@pytest.mark.parametrize("args", [
    ["--help"],
    ["odds"],
    ["odds", "--rules", "chemin_de_fer", "--player-strategy", "chemin_de_fer_player_draws_at_5",
     "--banker-strategy", "chemin_de_fer_banker_follows_punto_banco"],
    ["solve", "--decks", "infinite"],
    ["risk", "--bet", "player", "--bankroll", "20", "--goal", "20"],
])
def test_exact_commands_run_without_spark_delta_duckdb_or_polars(args):
    code = f"from pipeline.cli import main\nassert main({args!r}) == 0"
    assert heavy_modules_after(code) == []


def test_a_command_that_needs_duckdb_still_loads_it():
    """The check above can fail: `roads` draws through DuckDB, loaded when the command runs."""
    code = "from pipeline.cli import main\nassert main(['roads', '--outcomes', 'BPB', '--json']) == 0"
    assert "duckdb" in heavy_modules_after(code)


def test_risk_loads_no_store_arrow_or_job_machinery():
    """`baccarat risk` took over a second, half of it the CLI loading what only the table commands use."""
    code = ("from pipeline.cli import main\n"
            "assert main(['risk', '--bet', 'banker', '--bankroll', '10', '--goal', '10']) == 0\n"
            "print('loaded:', *(m for m in ('pyarrow', 'pipeline.storage', 'pipeline.runs', 'pipeline.jobs', "
            "'pipeline.systems', 'pipeline.marts.engines', 'pipeline.repair', 'pipeline.spark') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", f"import sys\n{code}"], capture_output=True, text=True, timeout=120,
                          check=True)
    assert done.stdout.splitlines()[-1] == "loaded:"
