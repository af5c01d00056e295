"""`baccarat`: the one command line, dispatching the jobs. All printing for people happens here."""

import json
import sys
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from pipeline.cards import MAX_DECKS, MIN_DECKS
from pipeline.errors import BaccaratError
from pipeline.exact import Odds, exact_odds
from pipeline.tables import DEFAULT_RULES, load_rule_set

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Baccarat analytics pipeline: exact odds, Spark simulation, marts and reports.",
)

RulesOption = Annotated[
    str, typer.Option("--rules", help="A rule set in conf/rules by name, or the path of a YAML file.")
]


def odds_document(odds: Odds, decks: int) -> dict:
    return {
        "rules": odds.rules,
        "decks": decks,
        "total_combinations": odds.total_combinations,
        "outcomes": {
            name: {"combinations": ways, "probability": float(odds.probability(name))}
            for name, ways in odds.outcomes.items()
        },
        "bets": {
            kind: {"ev": float(bet.ev), "house_edge_pct": float(bet.house_edge_pct), "sd": bet.sd}
            for kind, bet in odds.bets.items()
        },
    }


def _odds_tables(odds: Odds, decks: int) -> list[Table]:
    outcomes = Table(title=f"{odds.rules}, {decks} decks: {odds.total_combinations:,} six-card deals")
    for column in ("outcome", "combinations", "probability"):
        outcomes.add_column(column, justify="left" if column == "outcome" else "right")
    for name, ways in odds.outcomes.items():
        outcomes.add_row(name, f"{ways:,}", f"{float(odds.probability(name)):.6f}")
    bets = Table(title="bets, per unit staked")
    for column in ("bet", "EV", "house edge %", "SD"):
        bets.add_column(column, justify="left" if column == "bet" else "right")
    for kind, bet in odds.bets.items():
        bets.add_row(kind, f"{float(bet.ev):+.6f}", f"{float(bet.house_edge_pct):.4f}", f"{bet.sd:.4f}")
    return [outcomes, bets]


@app.command()
def odds(
    rules: RulesOption = DEFAULT_RULES,
    decks: Annotated[
        int | None, typer.Option(min=MIN_DECKS, max=MAX_DECKS, help="Override the rule set's number of decks.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
) -> None:
    """Exact odds of every outcome and bet, by counting card combinations from a full shoe."""
    rule_set = load_rule_set(rules, decks)
    result = exact_odds(rule_set)
    if as_json:
        print(json.dumps(odds_document(result, rule_set.decks)))
        return
    console = Console()
    for table in _odds_tables(result, rule_set.decks):
        console.print(table)


@app.callback()
def _commands() -> None:
    """Baccarat analytics pipeline: exact odds, Spark simulation, marts and reports."""


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; bad input of any kind ends in one line on stderr and exit status 2."""
    argv = sys.argv[1:] if argv is None else argv
    command = typer.main.get_command(app)
    if not argv:
        argv = ["--help"]
    try:
        result = command.main(args=argv, prog_name="baccarat", standalone_mode=False)
    except typer.Exit as done:
        return done.exit_code
    except typer.Abort:
        print("error: interrupted", file=sys.stderr)
        return 130
    except typer.TyperException as error:  # bad arguments, as click words them
        print(f"error: {error.format_message()}", file=sys.stderr)
        return 2
    except BaccaratError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return result if isinstance(result, int) else 0


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())


if __name__ == "__main__":
    run()
