"""The exact commands, with no Spark, store or SQL engine: odds, solve and risk."""

import json
import sys
from enum import Enum
from typing import Annotated

import typer

from pipeline.cards import MAX_DECKS, MIN_DECKS
from pipeline.cli.app import DecksOption, JsonOption, RulesOption, no_banque_banker_strategy, shoe_text
from pipeline.errors import BaccaratError
from pipeline.exact import Odds, exact_odds
from pipeline.games import banque
from pipeline.render import TextTable, show
from pipeline.rule_sets import DEFAULT_RULES, load_rule_set
from pipeline.user_files import output_folder


def odds(
    rules: RulesOption = DEFAULT_RULES,
    decks: DecksOption = None,
    player_strategy: Annotated[str | None, typer.Option(
        help="Games with options: the Player's strategy, in conf/strategies by name or a YAML file.")] = None,
    banker_strategy: Annotated[str | None, typer.Option(help="Games with options: the Banker's strategy.")] = None,
    banker_policy: Annotated[str | None, typer.Option(
        help=f"Baccarat banque: the Banker's policy, in conf/banque by name or a YAML file (default "
             f"{banque.DEFAULT_POLICY}); --player-strategy then takes NAME for both hands or NAME1,NAME2.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Exact odds of every outcome and bet, by counting card combinations from a full shoe; in a game
    with options (chemin de fer), the exact value of a strategy pair; in baccarat banque, of a policy profile."""
    from pipeline.games.value import INFINITE

    rule_set = load_rule_set(rules)
    if rule_set.two_hands is not None:
        _banque_odds(rule_set, decks, player_strategy, banker_strategy, banker_policy, as_json)
        return
    if banker_policy is not None:
        raise BaccaratError(f"--banker-policy is for baccarat banque (--rules banque), not rule set {rule_set.name!r}")
    if rule_set.has_options:
        _strategy_pair_odds(rule_set, decks, player_strategy, banker_strategy, as_json)
        return
    if player_strategy is not None or banker_strategy is not None:
        raise BaccaratError(f"rule set {rule_set.name!r} fixes every drawing decision: "
                            "--player-strategy and --banker-strategy are for games with options (chemin_de_fer)")
    if decks == INFINITE:
        raise BaccaratError(f"--decks {INFINITE} is for games with options; exact odds count a shoe of "
                            f"{MIN_DECKS} to {MAX_DECKS} decks")
    rule_set = rule_set.with_decks(decks)
    result = exact_odds(rule_set)
    warn_player_edges(result)
    if as_json:
        print(json.dumps(result.document(rule_set.decks)))
        return
    show(*_odds_tables(result, rule_set.decks))


def _odds_tables(odds: Odds, decks: int) -> list[TextTable]:
    outcomes = TextTable(f"{odds.rules}, {shoe_text(decks)}: {odds.total_combinations:,} six-card deals",
                         ("outcome", "combinations", "probability"), left=frozenset({"outcome"}))
    for name, ways in odds.outcomes.items():
        outcomes.add(name, f"{ways:,}", f"{float(odds.probability(name)):.6f}")
    bets = TextTable("bets, per unit staked", ("bet", "EV", "house edge %", "SD"), left=frozenset({"bet"}))
    for kind, bet in odds.bets.items():
        bets.add(kind, f"{float(bet.ev):+.6f}", f"{float(bet.house_edge_pct):.4f}", f"{bet.sd:.4f}")
    return [outcomes, bets]


def warn_player_edges(odds: Odds) -> None:
    for kind, bet in odds.player_edges().items():
        print(f"warning: {kind} has a positive expected value for the player ({float(bet.ev):+.2%} per unit) "
              f"under rule set {odds.rules!r}: check its payout", file=sys.stderr)


def _strategy_pair_odds(rule_set, decks, player_strategy: str | None, banker_strategy: str | None,
                        as_json: bool) -> None:
    from pipeline.games.strategies import load_strategy, shown_name
    from pipeline.games.value import pair_document, pair_value, shoe_of

    if player_strategy is None or banker_strategy is None:
        raise BaccaratError(f"rule set {rule_set.name!r} leaves drawing decisions to the players: give "
                            "--player-strategy NAME and --banker-strategy NAME (see conf/strategies)")
    rule_set, decks = shoe_of(rule_set, decks)
    player, banker = load_strategy(player_strategy), load_strategy(banker_strategy)
    names = shown_name(player), shown_name(banker)
    document = pair_document(rule_set.name, decks, *names, pair_value(rule_set, decks, player, banker))
    if as_json:
        print(json.dumps(document))
        return
    table = TextTable(f"{rule_set.name}, {shoe_text(decks)}: Player {names[0]} v Banker {names[1]}",
                      ("", "exact", "≈"), left=frozenset({""}))
    for side in ("player", "banker"):
        table.add(f"{side} wins", document["probabilities"][side], f"{document['probabilities_float'][side]:.6f}")
    for side in ("player", "banker"):
        table.add(f"{side} gain per unit", document["value"][side], f"{document['value_float'][side]:+.6f}")
    show(table)
    print(f"commission {float(rule_set.commission):.0%} of the Banker's wins; a tie pushes")


def _banque_odds(rule_set, decks, player_strategy: str | None, banker_strategy: str | None,
                 banker_policy: str | None, as_json: bool) -> None:
    from pipeline.games.banque_counts import rule_set_value  # numba: only a banque game needs it

    no_banque_banker_strategy(banker_strategy)
    document = rule_set_value(rule_set, decks, banker_policy, player_strategy)
    if as_json:
        print(json.dumps(document))
        return
    table = TextTable(f"{rule_set.name}, {shoe_text(document['decks'])}, stake share {document['stake_share']}: "
                      f"Banker {document['banker_policy']} v {' and '.join(document['player_strategies'])}",
                      ("", "exact", "≈"), left=frozenset({""}))
    for hand in ("hand1", "hand2"):
        for side in ("player", "banker"):
            table.add(f"{hand}: {side} wins", document["probabilities"][hand][side],
                      f"{document['probabilities_float'][hand][side]:.6f}")
    for who in ("banker", "hand1", "hand2"):
        per = "of both stakes" if who == "banker" else "staked"
        table.add(f"{who} gain per unit {per}", document["value"][who], f"{document['value_float'][who]:+.6f}")
    show(table)
    print(f"commission {float(rule_set.commission):.0%} of the Banker's wins; a tie pushes")


class BankerSees(str, Enum):
    total = "total"
    cards = "cards"


def solve(
    rules: RulesOption = "chemin_de_fer",
    decks: DecksOption = None,
    banker_sees: Annotated[BankerSees, typer.Option(
        help="What the Banker knows when he chooses: his total, or his two cards.")] = BankerSees.total,
    commission: Annotated[str | None, typer.Option(
        help="The house's share of a Banker win, 0 to 0.1; default the rule set's. 0 makes the game zero-sum.")] = None,
    as_json: JsonOption = False,
    strategies_folder: Annotated[str | None, typer.Option(
        "--write-strategies", metavar="FOLDER",
        help="Also write both sides' equilibrium strategies there, as strategy files.")] = None,
) -> None:
    """An equilibrium of chemin de fer, exactly: minimax without commission, Nash with one (and whether it
    is the only one)."""
    from pipeline.games.solve import commission_of, equilibrium_document, equilibrium_strategies, solve_rules
    from pipeline.games.strategies import write_strategies
    from pipeline.games.value import shoe_of

    if strategies_folder is not None:
        strategies_folder = output_folder(strategies_folder, "--write-strategies")
    rule_set, decks = shoe_of(load_rule_set(rules), decks)
    commission = rule_set.commission if commission is None else commission_of(commission)
    equilibrium = solve_rules(rule_set, decks, banker_sees.value, commission)
    document = equilibrium_document(rule_set.name, decks, banker_sees.value, commission, equilibrium)
    if strategies_folder is not None:
        strategies = equilibrium_strategies(rule_set, decks, banker_sees.value, commission, equilibrium)
        for path, written in write_strategies(strategies, strategies_folder):
            print(f"{'wrote' if written else 'already there:'} {path}", file=sys.stderr)
    if as_json:
        print(json.dumps(document))
        return
    _print_equilibrium(document)


def _print_equilibrium(document: dict) -> None:
    kind = "minimax (zero-sum)" if document["commission_float"] == 0 else "Nash equilibrium (bimatrix)"
    print(f"{document['rules']}, {shoe_text(document['decks'])}, Banker sees his {document['banker_sees']}, "
          f"commission {document['commission_float']:.2%}: {kind}, "
          f"{'unique' if document['unique'] else 'not unique'}")
    print(f"Player draws at 5 with probability {document['player_draw_at_5']} "
          f"(≈ {document['player_draw_at_5_float']:.6f})")
    for side in ("player", "banker"):
        print(f"{side} gain per unit: {document['value'][side]} (≈ {document['value_float'][side]:+.6f})")
    columns = ("Banker", "Player's third card", "draws with probability", "≈")
    table = TextTable("the Banker's play where it departs from punto banco or mixes", columns, left=frozenset(columns))
    for cell in document["banker"]:
        hand = f"{cell['cards'][0]},{cell['cards'][1]} ({cell['total']})" if cell["cards"] else str(cell["total"])
        third = "stood" if cell["player_third"] is None else str(cell["player_third"])
        table.add(hand, third, cell["draw"], f"{cell['draw_float']:.6f}")
    show(table)


def risk(
    bet: Annotated[str, typer.Option(help="The bet: player, banker, tie or any bet of the rule set.")],
    bankroll: Annotated[str, typer.Option(help="The bankroll at the start, in units (the stake is 1 unit).")],
    goal: Annotated[str, typer.Option(
        help="The win goal, in units: the session ends as soon as the bankroll is at least bankroll + goal "
             "(a win may pass it: a Banker win at 0.95 by less than one unit).")],
    system: Annotated[str, typer.Option(help="flat (1 unit a round) or martingale (1, 2, 4, ... units until a "
                                             "win; a stake the table maximum or the bankroll cannot take is a "
                                             "losing cycle, and the next stake is 1 unit).")] = "flat",
    table_max: Annotated[str | None, typer.Option(help="Martingale: the table maximum, in units.")] = None,
    rules: RulesOption = DEFAULT_RULES,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """The exact risk of ruin of flat or Martingale betting, rounds dealt independently with the rule set's
    exact odds: the chance to reach the goal before ruin (the bankroll cannot cover the next stake of
    1 unit), the expected rounds, stakes and net, and a Martingale's losing cycle; each value with a proven
    bound on its distance from the exact rational (docs/betting-systems.md)."""
    from pipeline import risk as risk_model

    question = risk_model.RiskQuestion(bet, system, risk_model.units(bankroll, "--bankroll"),
                                       risk_model.units(goal, "--goal"),
                                       None if table_max is None else risk_model.units(table_max, "--table-max"))
    risk_model.check_question(question)
    answer = risk_model.risk(question, risk_model.net_distribution(load_rule_set(rules), bet))
    document = risk_model.risk_document(answer)
    if as_json:
        print(json.dumps(document))
        return
    table = TextTable(f"{system} on {bet}, bankroll {document['bankroll']}, goal +{document['goal']} units",
                      ("quantity", "value", "error bound"), left=frozenset({"quantity"}))
    for key in ("goal_reached", "ruined", "expected_rounds", "expected_wagered", "expected_net"):
        table.add(key.replace("_", " "), document[key]["value"], document[key]["error_bound"])
    for key, value in document.get("cycle", {}).items():
        table.add(f"first cycle: {key.replace('_', ' ')}", value, "exact")
    show(table)
