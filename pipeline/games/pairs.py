"""The strategy pair a game with options (chemin de fer) is played with: chosen by name or by default,
checked against the rule set, and recorded with a run (the simulation plays it, the marts read it back).

The default is the equilibrium of the rule set's own shoe in which the Banker sees his two cards
(and the Player his total), the finite-shoe model of Downton and Lockwood: the files
`<rules>_equilibrium_<decks>_decks_cards_{player,banker}` that `baccarat solve --banker-sees cards
--write-strategies conf/strategies` writes.
"""

from dataclasses import dataclass

from pipeline.cards import decks_text
from pipeline.errors import BaccaratError
from pipeline.games.strategies import (
    BANKER,
    PLAYER,
    Strategy,
    known_strategies,
    load_strategy,
    strategy_document,
    validated_strategy,
)
from pipeline.rule_sets import RuleSet

DEFAULT_BANKER_SEES = "cards"


@dataclass(frozen=True)
class StrategyPair:
    player: Strategy
    banker: Strategy

    def document(self) -> dict:
        """Both strategies as the YAML they load from: what a run records, enough to play it again."""
        return {PLAYER: strategy_document(self.player), BANKER: strategy_document(self.banker)}

    @classmethod
    def from_document(cls, document: dict) -> "StrategyPair":
        return cls(*(validated_strategy(document.get(side), f"the run's {side} strategy") for side in (PLAYER, BANKER)))


def default_strategy(rule_set: RuleSet, side: str) -> str:
    return f"{rule_set.name}_equilibrium_{rule_set.decks}_decks_{DEFAULT_BANKER_SEES}_{side}"


def strategy_pair(rule_set: RuleSet, player: str | None, banker: str | None) -> StrategyPair | None:
    """The pair to play: None for a fixed tableau (which takes no strategy), else the named strategies,
    each side defaulting to the shipped equilibrium; a one-line error for a pair that does not fit."""
    if not rule_set.has_options:
        if player is not None or banker is not None:
            raise BaccaratError(f"rule set {rule_set.name!r} fixes every drawing decision: --player-strategy "
                                "and --banker-strategy are for games with options (chemin_de_fer)")
        return None
    return checked_pair(rule_set, StrategyPair(_strategy(rule_set, PLAYER, player), _strategy(rule_set, BANKER, banker)))


def _strategy(rule_set: RuleSet, side: str, name: str | None) -> Strategy:
    if name is not None:
        return load_strategy(name)
    name = default_strategy(rule_set, side)
    if name not in known_strategies():
        raise BaccaratError(
            f"no {side} strategy {name!r} is shipped for rule set {rule_set.name!r} with {decks_text(rule_set.decks)}: "
            f"give --{side}-strategy, or write the equilibrium with `baccarat solve --rules {rule_set.name} "
            f"--banker-sees {DEFAULT_BANKER_SEES} --write-strategies FOLDER`")
    return load_strategy(name)


def checked_pair(rule_set: RuleSet, pair: StrategyPair | None) -> StrategyPair | None:
    """`pair` if it plays `rule_set`'s game (each strategy its side), None for a fixed tableau."""
    if pair is None:
        rule_set.check_fixed_tableau("give a strategy for each side (--player-strategy, --banker-strategy)")
        return None
    if not rule_set.has_options:
        raise BaccaratError(f"rule set {rule_set.name!r} fixes every drawing decision: it plays no strategies")
    pair.player.check_fits(rule_set, PLAYER)
    pair.banker.check_fits(rule_set, BANKER)
    return pair
