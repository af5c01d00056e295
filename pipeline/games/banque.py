"""Baccarat banque: one Banker against two Player hands, with one drawing decision for both.

The round (docs/rules.md): two cards to hand 1, hand 2 and the Banker. A natural of the Banker, or
of both hands, ends it; a hand with a natural (the Banker having none) is paid at once and play
goes on against the other. Each hand still playing draws on 0-4, stands on 6-7 and, at 5, draws
with its strategy's probability (hand 1 first). The Banker then sees his total and what each hand
showed, a column of 0-9 (its third card), PLAYER_STOOD or NATURAL_PAID, and draws or stands once.

A Banker policy (conf/banque/<name>.yaml) is a rule that fills his decision table
`draw[total, column 1, column 2]`:
- maximise_expected_total: draw iff drawing raises his expected win over both hands, the stakes
  weighed by theta, given the Players' strategies and what he sees (his best response to them);
- follow_punto_banco: the punto banco table against every hand still playing; where it says
  draw against one hand and stand against the other, `when_split` decides: draw, stand, or the
  hand with the larger stake (hand 1 when the stakes are equal).

Exact values are for cards dealt with replacement, each value v with probability
weights[v] / sum(weights): the infinite deck (Kemeny and Snell's model; 13 ranks, so value 0 has
weight 4) or any other weights. Given the Banker's total and both columns, the two hands are then
independent, so every count factors into small arrays of Fractions. A finite shoe is counted in
pipeline/games/banque_counts.py.
"""

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Annotated, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from pipeline.cards import VALUES
from pipeline.config_files import NAME, known_names, locate, read_yaml, shipped_or_file, validation_problems
from pipeline.errors import BaccaratError
from pipeline.games.strategies import (
    PLAYER,
    Strategy,
    load_strategy,
    player_draw_probabilities,
    shown_name,
)
from pipeline.games.value import DRAW, INFINITE_DECK, STAND
from pipeline.rule_sets import RuleSet
from pipeline.rules import NATURAL_MIN, PLAYER_STOOD, load_draw_rules

HANDS = 2
HAND_LOSES, HAND_WINS = 0, 1  # the last axis of Chances' win arrays
NATURAL_PAID = PLAYER_STOOD + 1  # the hand's natural was paid before the Banker's decision
COLUMNS = NATURAL_PAID + 1
POLICY_FOLDER = "banque"
DEFAULT_POLICY = "banque_banker_maximises_expected_total"
DEFAULT_PLAYER_STRATEGY = "banque_player_draws_at_5"
FOLLOWED_TABLE = "punto_banco"


class BanquePolicy(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Annotated[str, Field(pattern=NAME.pattern)]
    description: str = ""
    rule: Literal["maximise_expected_total", "follow_punto_banco"]
    when_split: Literal["draw", "stand", "larger_stake"] | None = None  # follow_punto_banco only
    on_equal: Literal["draw", "stand"] | None = None  # maximise_expected_total only: when both gain alike

    @model_validator(mode="after")
    def _settings_fit_the_rule(self) -> "BanquePolicy":
        if (self.rule == "follow_punto_banco") != (self.when_split is not None):
            raise ValueError("when_split (draw, stand or larger_stake) is given for follow_punto_banco, and only then")
        if (self.rule == "maximise_expected_total") != (self.on_equal is not None):
            raise ValueError("on_equal (draw or stand) is given for maximise_expected_total, and only then")
        return self


def known_policies() -> list[str]:
    return known_names(POLICY_FOLDER)


def load_policy(name_or_path: str) -> BanquePolicy:
    """A shipped Banker policy by name (conf/banque), or a YAML file by path."""
    what = f"banque policy {name_or_path!r}"
    document = read_yaml(locate(POLICY_FOLDER, name_or_path, "banque policy"), what)
    try:
        return BanquePolicy.model_validate(document)
    except ValidationError as error:
        raise BaccaratError(f"{what}: {validation_problems(error)}") from None


def check_banque(rule_set: RuleSet) -> RuleSet:
    if rule_set.two_hands is None:
        raise BaccaratError(f"rule set {rule_set.name!r} is not baccarat banque (it has no two_hands)")
    return rule_set


def player_strategies(rule_set: RuleSet, names: str | None) -> tuple[Strategy, Strategy]:
    """The two hands' strategies from "NAME" (both hands) or "NAME1,NAME2"."""
    given = (names or DEFAULT_PLAYER_STRATEGY).split(",")
    if len(given) > HANDS or not all(given):
        raise BaccaratError(f"--player-strategy takes one strategy for both hands or two as NAME1,NAME2, not {names!r}")
    strategies = [load_strategy(name).check_fits(rule_set, PLAYER) for name in given]
    return strategies[0], strategies[-1]


@dataclass(frozen=True)
class Profile:
    """Everything that decides a banque round's play: the stakes, the commission, and each side's draws."""

    stake_share: Fraction  # theta: hand 1's share of the stakes
    commission: Fraction
    player_draw: np.ndarray  # object[HANDS, 10]: each hand's probability of drawing on its two-card total
    banker_draw: np.ndarray  # object[10, COLUMNS, COLUMNS]: the Banker's, on his total v both columns

    @property
    def stakes(self) -> tuple[Fraction, Fraction]:
        return self.stake_share, 1 - self.stake_share


CellGains = Callable[[Profile], np.ndarray]  # a profile -> [total, column 1, column 2, action]: see _cell_gains


def with_replacement(weights: list[int] = INFINITE_DECK) -> CellGains:
    """The Banker's gains at each cell when cards are dealt with replacement with `weights`."""
    return lambda profile: _cell_gains(Chances.of(profile, weights), profile)


def profile_of(rule_set: RuleSet, policy: BanquePolicy, strategies: tuple[Strategy, Strategy],
               cell_gains: CellGains | None = None) -> Profile:
    """The profile a policy makes against the Players' strategies; a maximising Banker weighs his
    gains by `cell_gains` (default: the infinite deck)."""
    check_banque(rule_set)
    draw = load_draw_rules(rule_set.draw_rules)
    players = np.array([player_draw_probabilities(draw, strategy) for strategy in strategies], dtype=object)
    share, commission = Fraction(rule_set.two_hands.stake_share), rule_set.commission
    unset = Profile(share, commission, players, np.zeros((VALUES, COLUMNS, COLUMNS), dtype=object))
    if policy.rule == "follow_punto_banco":
        return _with_banker(unset, _following_table(policy.when_split, share))
    gains = (cell_gains or with_replacement())(unset)
    return _with_banker(unset, _maximising(gains, policy.on_equal == "draw"))


def _with_banker(profile: Profile, banker_draw: np.ndarray) -> Profile:
    return Profile(profile.stake_share, profile.commission, profile.player_draw, banker_draw)


def _following_table(when_split: str, share: Fraction) -> np.ndarray:
    table = load_draw_rules(FOLLOWED_TABLE).banker_draws  # bool[10, 11]
    draws = np.zeros((VALUES, COLUMNS, COLUMNS), dtype=object)
    larger_first = share >= Fraction(1, 2)
    for total in range(NATURAL_MIN):
        for first in range(COLUMNS):
            for second in range(COLUMNS):
                against = [table[total, c] for c in (first, second) if c != NATURAL_PAID]
                if len(set(against)) == 1:
                    choice = against[0]
                elif not against:
                    choice = False
                elif when_split == "larger_stake":
                    choice = table[total, first if larger_first else second]
                else:
                    choice = when_split == "draw"
                draws[total, first, second] = Fraction(int(choice))
    return draws


@dataclass(frozen=True)
class Chances:
    """What decides every value, for cards dealt with replacement:
    banker_start[t]: the Banker's two-card total;
    column[h, c]: hand h shows column c;
    start_wins[t, outcome]: with the Banker's natural t, the chance a hand's two cards lose (0) or win (1);
    wins[h, t, c, action, outcome]: the chance hand h shows c and loses (0) or wins (1) when the Banker,
    on a non-natural t, takes `action` (STAND, DRAW)."""

    banker_start: np.ndarray
    column: np.ndarray
    start_wins: np.ndarray
    wins: np.ndarray

    @classmethod
    def of(cls, profile: Profile, weights: list[int]) -> "Chances":
        if len(weights) != VALUES or min(weights) < 0 or sum(weights) == 0:
            raise BaccaratError("card weights need 10 non-negative counts per value, not all 0")
        card = np.array([Fraction(w, sum(weights)) for w in weights], dtype=object)
        start = _two_card_totals(card)
        banker_final = _banker_finals(card)  # [t, action, final]
        hands = [_columns_and_finals(start, card, profile.player_draw[h]) for h in range(HANDS)]
        lower = np.tril(np.ones((VALUES, VALUES), dtype=int), -1)  # lower[b, f]: b > f
        start_wins = np.array([[start @ lower[t], start @ lower.T[t]] for t in range(VALUES)], dtype=object)
        wins = np.zeros((HANDS, VALUES, COLUMNS, 2, 2), dtype=object)
        for h, finals in enumerate(hands):  # finals[c, f]
            wins[h, ..., HAND_LOSES] = np.einsum("tab,cf,bf->tca", banker_final, finals, lower)
            wins[h, ..., HAND_WINS] = np.einsum("tab,cf,fb->tca", banker_final, finals, lower)
            wins[h, :, NATURAL_PAID, :, HAND_WINS] = finals[NATURAL_PAID].sum()
            wins[h, :, NATURAL_PAID, :, HAND_LOSES] = 0
        return cls(start, np.array([finals.sum(axis=1) for finals in hands]), start_wins, wins)


def _two_card_totals(card: np.ndarray) -> np.ndarray:
    start = np.zeros(VALUES, dtype=object)
    for a in range(VALUES):
        for b in range(VALUES):
            start[(a + b) % 10] += card[a] * card[b]
    return start


def _banker_finals(card: np.ndarray) -> np.ndarray:
    finals = np.zeros((VALUES, 2, VALUES), dtype=object)
    for total in range(VALUES):
        finals[total, STAND, total] = Fraction(1)
        for v in range(VALUES):
            finals[total, DRAW, (total + v) % 10] += card[v]
    return finals


def _columns_and_finals(start: np.ndarray, card: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """[column, final total]: the chance a hand shows the column and ends on the total (Banker not natural)."""
    finals = np.zeros((COLUMNS, VALUES), dtype=object)
    for total in range(VALUES):
        if total >= NATURAL_MIN:
            finals[NATURAL_PAID, total] += start[total]
            continue
        finals[PLAYER_STOOD, total] += start[total] * (1 - draws[total])
        for v in range(VALUES):
            finals[v, (total + v) % 10] += start[total] * draws[total] * card[v]
    return finals


def _cell_gains(chances: Chances, profile: Profile) -> np.ndarray:
    """[t, c1, c2, action]: the Banker's expected win over both hands from (t, c1, c2) and the action,
    times the chance of (c1, c2) (any positive multiple serves: only the sign of draw less stand counts)."""
    keep = 1 - profile.commission
    gain = chances.wins[..., HAND_LOSES] * keep - chances.wins[..., HAND_WINS]  # [h, t, c, action]
    first, second = profile.stakes
    return (first * np.einsum("tca,d->tcda", gain[0], chances.column[1])
            + second * np.einsum("tda,c->tcda", gain[1], chances.column[0]))


def _maximising(gains: np.ndarray, draw_on_equal: bool) -> np.ndarray:
    """Draw where drawing wins the Banker more over both hands than standing does."""
    better = gains[..., DRAW] - gains[..., STAND]
    draws = np.zeros((VALUES, COLUMNS, COLUMNS), dtype=object)
    draws[:NATURAL_MIN] = [[[Fraction(int(gain > 0 or (gain == 0 and draw_on_equal))) for gain in row]
                            for row in rows] for rows in better[:NATURAL_MIN]]
    return draws


@dataclass(frozen=True)
class BanqueValue:
    """Each hand's chances against the Banker (a tie pushes), and the gains they make."""

    player_wins: tuple[Fraction, Fraction]
    banker_wins: tuple[Fraction, Fraction]
    stakes: tuple[Fraction, Fraction]
    commission: Fraction

    def hand(self, h: int) -> Fraction:
        """Hand h's expected gain per unit staked on it."""
        return self.player_wins[h] - self.banker_wins[h]

    @property
    def banker(self) -> Fraction:
        """The Banker's expected win per unit of the two hands' stakes together, after the commission."""
        return sum(s * ((1 - self.commission) * b - p)
                   for s, b, p in zip(self.stakes, self.banker_wins, self.player_wins))


def banque_value(profile: Profile, weights: list[int] = INFINITE_DECK) -> BanqueValue:
    """The exact value of a profile, cards dealt with replacement with `weights`."""
    chances = Chances.of(profile, weights)
    natural = chances.banker_start[NATURAL_MIN:]
    playing = chances.banker_start[:NATURAL_MIN]
    action = np.stack([1 - profile.banker_draw, profile.banker_draw], axis=-1)[:NATURAL_MIN]  # [t, c1, c2, a]
    results = {HAND_LOSES: [], HAND_WINS: []}
    for outcome, chances_of in results.items():
        for h in range(HANDS):
            at_start = natural @ chances.start_wins[NATURAL_MIN:, outcome]
            other = chances.column[1 - h]
            mine = chances.wins[h, :NATURAL_MIN, :, :, outcome]  # [t, c, a]
            if h == 0:
                played = np.einsum("t,tca,tcda,d->", playing, mine, action, other)
            else:
                played = np.einsum("t,tda,tcda,c->", playing, mine, action, other)
            chances_of.append(Fraction(at_start + played))
    return BanqueValue(tuple(results[HAND_WINS]), tuple(results[HAND_LOSES]), profile.stakes, profile.commission)


def value_document(rule_set: RuleSet, decks: int | str, policy: BanquePolicy, strategies: tuple[Strategy, Strategy],
                   value: BanqueValue) -> dict:
    """A profile's value as JSON: exact fractions as "p/q" strings, floats beside them."""
    gains = {"banker": value.banker, "hand1": value.hand(0), "hand2": value.hand(1)}
    chances = {f"hand{h + 1}": {"player": value.player_wins[h], "banker": value.banker_wins[h],
                                "tie": 1 - value.player_wins[h] - value.banker_wins[h]} for h in range(HANDS)}
    return {
        "rules": rule_set.name, "decks": decks, "stake_share": str(value.stakes[0]),
        "commission": str(value.commission), "banker_policy": shipped_or_file(POLICY_FOLDER, policy.model_dump()),
        "player_strategies": [shown_name(strategy) for strategy in strategies],
        "value": {who: str(gain) for who, gain in gains.items()},
        "value_float": {who: float(gain) for who, gain in gains.items()},
        "probabilities": {hand: {k: str(p) for k, p in outcomes.items()} for hand, outcomes in chances.items()},
        "probabilities_float": {hand: {k: float(p) for k, p in outcomes.items()} for hand, outcomes in chances.items()},
    }

