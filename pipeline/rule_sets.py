"""Table rule sets: `conf/rules/<name>.yaml` (or any path) -> a validated RuleSet."""

from decimal import Decimal
from fractions import Fraction
from functools import cached_property
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_serializer, model_validator

from pipeline.bets import BET_KINDS, Terms
from pipeline.cards import CARDS_PER_DECK, MAX_DECKS, MIN_DECKS, decks_text
from pipeline.config_files import NAME, known_names, locate, read_yaml, validation_problems
from pipeline.errors import BaccaratError
from pipeline.rules import DrawRules, load_draw_rules

DEFAULT_RULES = "punto_banco"
MOST_CARDS_BURNED = 11  # the turned card and up to ten more
MOST_CARDS_PER_ROUND = 6
MOST_CARDS_PER_BANQUE_ROUND = 9  # three hands of up to three cards
OPTION_GAME_BETS = ("player", "banker")  # chemin de fer: the punters back the Player, the Banker holds the bank
MOST_COMMISSION = Decimal("0.1")
STAKE_SHARE_PLACES = 4  # theta times a commission of 2 decimals stays exact in 6


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Burn(_Strict):
    """docs/rules.md, "Shoe procedure": turn one card, then burn as many as its value; a ten or face burns
    `ten_value_burns`."""

    enabled: bool
    ten_value_burns: Annotated[int, Field(ge=0, le=10, strict=True)] = 10


class CutCard(_Strict):
    cards_from_end: Annotated[int, Field(ge=1, strict=True)]
    extra_round: bool  # deal one more round after the round in which the cut card appears


class TwoHands(_Strict):
    """Baccarat banque: the Banker plays two Player hands at once; `stake_share` (theta) is the first
    hand's share of the stakes, the second hand's is 1 - theta."""

    stake_share: Decimal

    @model_validator(mode="after")
    def _a_share(self) -> "TwoHands":
        share = self.stake_share
        if not 0 < share < 1 or share.as_tuple().exponent < -STAKE_SHARE_PLACES:
            raise ValueError(f"stake_share (theta, the first hand's share of the stakes) must be strictly between "
                             f"0 and 1 with at most {STAKE_SHARE_PLACES} decimals, got {share}")
        return self


class RuleSet(_Strict):
    name: Annotated[str, Field(pattern=NAME.pattern)]
    description: str = ""
    decks: Annotated[int, Field(ge=MIN_DECKS, le=MAX_DECKS, strict=True)]
    draw_rules: Annotated[str, Field(pattern=NAME.pattern)]
    burn: Burn
    cut_card: CutCard
    bets: Annotated[dict[str, Terms], Field(min_length=1)]
    two_hands: TwoHands | None = None  # baccarat banque

    @model_validator(mode="after")
    def _consistent(self) -> "RuleSet":
        for kind, terms in self.bets.items():
            if kind not in BET_KINDS:
                raise ValueError(f"unknown bet kind {kind!r} (known: {', '.join(BET_KINDS)})")
            if kind != "banker" and (terms.pays_on_six is not None or terms.push_on_three_card_seven):
                raise ValueError(f"bet {kind!r}: pays_on_six and push_on_three_card_seven apply to banker only")
        cards = self.decks * CARDS_PER_DECK
        per_round = MOST_CARDS_PER_BANQUE_ROUND if self.two_hands else MOST_CARDS_PER_ROUND
        least = per_round * (2 if self.cut_card.extra_round else 1) - 1
        most = cards - MOST_CARDS_BURNED - 1
        if not least <= self.cut_card.cards_from_end <= most:
            raise ValueError(
                f"cut card {self.cut_card.cards_from_end} cards from the end is outside the shoe: "
                f"with {decks_text(self.decks)} it must be {least} to {most}"
            )
        if load_draw_rules(self.draw_rules).has_options:
            self._check_option_game_bets()
        elif self.two_hands is not None:
            raise ValueError(f"two_hands (baccarat banque) needs a draw table with options, not {self.draw_rules!r}")
        return self

    def _check_option_game_bets(self) -> None:
        """A game with decisions stakes the Player hand against the Banker: a tie pushes, and the
        house takes at most 10 % of a Banker win."""
        if sorted(self.bets) != sorted(OPTION_GAME_BETS):
            raise ValueError(f"draw table {self.draw_rules!r} has options: its bets are player and banker only, "
                             f"not {', '.join(self.bets)}")
        player, banker = self.bets["player"], self.bets["banker"]
        if player.pays != 1 or banker.pays_on_six is not None or banker.push_on_three_card_seven:
            raise ValueError("a game with options pays the Player 1:1 and the Banker 1:1 less a commission")
        if not 1 - MOST_COMMISSION <= banker.pays <= 1:
            raise ValueError(f"the banker bet pays {banker.pays}: the commission must be 0 to {MOST_COMMISSION}")

    @model_serializer(mode="wrap")
    def _without_absent_two_hands(self, dump):
        """A one-hand rule set dumps as before two_hands existed: its runs keep their parameters."""
        document = dump(self)
        if self.two_hands is None:
            document.pop("two_hands", None)
        return document

    @cached_property
    def draw(self) -> DrawRules:
        return load_draw_rules(self.draw_rules)

    @property
    def has_options(self) -> bool:
        """Whether players make drawing decisions (chemin de fer): no fixed tableau decides every round."""
        return self.draw.has_options

    def check_fixed_tableau(self, what: str) -> "RuleSet":
        """Refuse, in one line, work that needs every drawing decision fixed by the table."""
        if self.has_options:
            raise BaccaratError(f"rule set {self.name!r} leaves drawing decisions to the players "
                                f"(draw table {self.draw_rules!r}): {what}")
        return self

    @property
    def commission(self) -> Fraction:
        """The share of a Banker win the house keeps: 1 less what the banker bet pays."""
        return 1 - Fraction(self.bets["banker"].pays)

    @property
    def cards(self) -> int:
        return self.decks * CARDS_PER_DECK

    def with_decks(self, decks: int | None) -> "RuleSet":
        if decks is None or decks == self.decks:
            return self
        return _validated({**self.model_dump(), "decks": decks}, f"rule set {self.name!r} with {decks_text(decks)}")


def _validated(document: dict, what: str) -> RuleSet:
    try:
        rule_set = RuleSet.model_validate(document)
        rule_set.draw  # a missing draw table is a config error too
    except ValidationError as error:
        raise BaccaratError(f"{what}: {validation_problems(error)}") from None
    return rule_set


def known_rule_sets() -> list[str]:
    return known_names("rules")


def fixed_tableau_rule_sets() -> list[str]:
    """The shipped rule sets whose table decides every draw (no chemin de fer options)."""
    return [name for name in known_rule_sets() if not load_rule_set(name).has_options]


def load_rule_set(name_or_path: str = DEFAULT_RULES, decks: int | None = None) -> RuleSet:
    """A shipped rule set by name, or a YAML file by path; `decks` overrides the file's."""
    what = f"rule set {name_or_path!r}"
    return _validated(read_yaml(locate("rules", name_or_path, "rule set"), what), what).with_decks(decks)
