"""An independent, plain-Python reference of the game, written from docs/rules.md without the
project's tables or its settlement (pipeline/bets.py): the checker every engine in the project is
compared against; and the comparison of an engine's rows with a reference's (assert_rows_close)."""

import math
from collections.abc import Collection
from decimal import Decimal

from pipeline.rules import Result


def card_rank(code: int) -> int:
    return code // 4 + 1


def card_value(code: int) -> int:
    return card_rank(code) if card_rank(code) <= 9 else 0


def punto_banco_banker_draws(banker: int, v: int) -> bool:
    """docs/rules.md's Banker table, when the Player drew a third card worth v."""
    if banker <= 2:
        return True
    if banker == 3:
        return v != 8
    if banker == 4:
        return 2 <= v <= 7
    if banker == 5:
        return 4 <= v <= 7
    if banker == 6:
        return v in (6, 7)
    return False


def reference_round(p1, b1, p2, b2, c5, c6):
    """Punto banco written out plainly from docs/rules.md, independent of the tables."""
    player = (p1 + p2) % 10
    banker = (b1 + b2) % 10
    player_cards = banker_cards = 2
    if player >= 8 or banker >= 8:
        return Result(player, banker, 2, 2)
    if player <= 5:
        v = c5
        player = (player + v) % 10
        player_cards = 3
        if punto_banco_banker_draws(banker, v):
            banker = (banker + c6) % 10
            banker_cards = 3
    elif banker <= 5:
        banker = (banker + c5) % 10
        banker_cards = 3
    return Result(player, banker, player_cards, banker_cards)


def reference_chemin_de_fer(p1, b1, p2, b2, c5, c6, player_draws_at_5: bool, banker_chooses):
    """Chemin de fer written out plainly from docs/rules.md: naturals end the round; the Player draws on
    0-4, stands on 6-7 and chooses at 5; banker_chooses(total, (b1, b2), v or None when the Player
    stood) says True or False where the Banker chooses, None where the punto banco table decides.
    Returns the final totals (Player, Banker)."""
    return chemin_de_fer_hands(p1, b1, p2, b2, c5, c6, player_draws_at_5, banker_chooses)[:2]


def chemin_de_fer_hands(p1, b1, p2, b2, c5, c6, player_draws_at_5: bool, banker_chooses):
    """reference_chemin_de_fer's round: (Player total, Banker total, Player's cards, Banker's cards)."""
    player, banker = (p1 + p2) % 10, (b1 + b2) % 10
    if player >= 8 or banker >= 8:
        return player, banker, 2, 2
    v, next_card, player_cards, banker_cards = None, c5, 2, 2
    if player <= 4 or (player == 5 and player_draws_at_5):
        v, next_card, player_cards = c5, c6, 3
        player = (player + v) % 10
    choice = banker_chooses(banker, (b1, b2), v)
    fixed = banker <= 5 if v is None else punto_banco_banker_draws(banker, v)
    if fixed if choice is None else choice:
        banker, banker_cards = (banker + next_card) % 10, 3
    return player, banker, player_cards, banker_cards


# docs/rules.md: the casino Banker chooses at 3 v 9, 4 v 1, 5 v 4 and 6 when the Player stood (None);
# the parlor Banker at every cell. Both Players choose at 5.
CASINO_BANKER_OPTIONS = {(3, 9), (4, 1), (5, 4), (6, None)}
PLAYER_OPTION_TOTAL = 5


def banker_has_option(game: str, banker: int, v: int | None) -> bool:
    return game == "chemin_de_fer_parlor" or (banker, v) in CASINO_BANKER_OPTIONS


class ShoeStream:
    """A shoe's random numbers written out plainly from the kernel's documented recipe: xoshiro256**
    (Blackman-Vigna) seeded by four splitmix64 outputs from the shoe's start, Fisher-Yates with
    Lemire's bounded integers, then the same stream for the mixed choices."""

    MASK = 2**64 - 1
    GOLDEN = 0x9E3779B97F4A7C15

    def __init__(self, start: int):
        x, self.state = start, []
        for _ in range(4):
            x = (x + self.GOLDEN) & self.MASK
            z = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & self.MASK
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & self.MASK
            self.state.append(z ^ (z >> 31))

    @classmethod
    def _rotl(cls, x: int, k: int) -> int:
        return ((x << k) | (x >> (64 - k))) & cls.MASK

    def next(self) -> int:
        s0, s1, s2, s3 = self.state
        result = self._rotl((s1 * 5) & self.MASK, 7) * 9 & self.MASK
        t = (s1 << 17) & self.MASK
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        self.state = [s0, s1, s2, self._rotl(s3, 45)]
        return result

    def shuffled(self, decks: int) -> list[int]:
        cards = [i % 52 for i in range(decks * 52)]
        for i in range(len(cards) - 1, 0, -1):
            bound = i + 1
            while True:
                m = (self.next() >> 32) * bound
                low = m & 0xFFFFFFFF
                if low >= bound or low >= (2**32 - bound) % bound:
                    break
            j = m >> 32
            cards[i], cards[j] = cards[j], cards[i]
        return cards

    def draws(self, chance) -> bool:
        """A mixed choice: 53 random bits as a fraction of 1, below the chance of drawing."""
        return (self.next() >> 11) < chance * 2**53


def hands_of(deal, player_cards: int, banker_cards: int) -> tuple[list[int], list[int]]:
    """The card codes of both hands, from a deal in docs/rules.md's order (Player, Banker, Player,
    Banker, then the third cards: the Player's first when he draws) and how many cards each holds."""
    player = list(deal[0:4:2]) + ([deal[4]] if player_cards == 3 else [])
    banker_third = deal[5] if player_cards == 3 else deal[4]
    return player, list(deal[1:4:2]) + ([banker_third] if banker_cards == 3 else [])


def reference_net(kind: str, terms, player: list[int], banker: list[int]) -> Decimal:
    """Net of one unit on `kind`, from the card codes of both hands, written out bet by bet."""
    pt = sum(card_value(c) for c in player) % 10
    bt = sum(card_value(c) for c in banker) % 10
    player_pair = card_rank(player[0]) == card_rank(player[1])
    banker_pair = card_rank(banker[0]) == card_rank(banker[1])
    pays, lose = terms.pays, Decimal(-1)
    if kind == "player":
        return pays if pt > bt else (lose if bt > pt else Decimal(0))
    if kind == "banker":
        if pt > bt:
            return lose
        if pt == bt:
            return Decimal(0)
        if terms.push_on_three_card_seven and bt == 7 and len(banker) == 3:
            return Decimal(0)
        if terms.pays_on_six is not None and bt == 6:
            return terms.pays_on_six
        return pays
    wins = {
        "tie": pt == bt,
        "super_six": bt > pt and bt == 6,
        "dragon_7": bt > pt and bt == 7 and len(banker) == 3,
        "panda_8": pt > bt and pt == 8 and len(player) == 3,
        "player_pair": player_pair,
        "banker_pair": banker_pair,
        "either_pair": player_pair or banker_pair,
        "perfect_pair": player[0] == player[1] or banker[0] == banker[1],
    }[kind]
    return pays if wins else lose


def big_road_places(results: str) -> list[tuple[int, int]]:
    """Each round's (big_road_column, streak_index), as the rounds contract defines them: a Banker or
    Player result's logical column on the big road (a new one whenever the winner changes) and its row
    in it, ties not breaking a streak; a tie's column is that of the entry it is marked on (0 before the
    first result) and its index is its place among consecutive ties, from 0."""
    places, column, row, tie_run, winner, previous = [], 0, 0, 0, None, None
    for result in results:
        if result == "T":
            tie_run = tie_run + 1 if previous == "T" else 0
            places.append((column, tie_run))
        else:
            same = result == winner
            column += winner is not None and not same
            row = row + 1 if same else 0
            places.append((column, row))
            winner = result
        previous = result
    return places


def nearest_rank(ordered: list[float], percent: int) -> float:
    """The value at rank ceil(p n / 100) (at least 1) of `ordered`, sorted ascending."""
    return ordered[max(1, -(-percent * len(ordered) // 100)) - 1]


def binned_rank(ordered: list[float], percent: int) -> float:
    """advantage_by_depth's percentile: the least EV of the 2^-16-wide bin (floor(ev * 2^16)) that holds
    the nearest-rank EV."""
    def bin_of(ev: float) -> int:
        return math.floor(ev * 2 ** 16)

    return min(ev for ev in ordered if bin_of(ev) == bin_of(nearest_rank(ordered, percent)))


def assert_rows_close(rows: list[dict], expected: list[dict], exact: Collection[str] = ()) -> None:
    """Rows (as dicts) against a reference's, in order: the same columns in the same order, each float
    within 1e-9 of the reference's (relative, or 1e-15 near 0), every other value and the floats of the
    columns named in `exact` (a mart's percentiles: EVs some round had) equal."""
    assert len(rows) == len(expected)
    for row, want in zip(rows, expected):
        assert list(row) == list(want)
        for column, value in want.items():
            if isinstance(value, float) and column not in exact:
                assert math.isclose(row[column], value, rel_tol=1e-9, abs_tol=1e-15), (column, row, want)
            else:
                assert row[column] == value, (column, row, want)
