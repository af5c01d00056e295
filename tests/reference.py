"""An independent, plain-Python reference of the game, written from RULES.md without the
project's tables: the checker every engine in the project is compared against."""

from decimal import Decimal

from pipeline.rules import Result


def card_rank(code: int) -> int:
    return code // 4 + 1


def card_value(code: int) -> int:
    return card_rank(code) if card_rank(code) <= 9 else 0


def reference_round(p1, b1, p2, b2, c5, c6):
    """Punto banco written out plainly from RULES.md, independent of the tables."""
    player = (p1 + p2) % 10
    banker = (b1 + b2) % 10
    player_cards = banker_cards = 2
    if player >= 8 or banker >= 8:
        return Result(player, banker, 2, 2)
    if player <= 5:
        v = c5
        player = (player + v) % 10
        player_cards = 3
        if banker <= 2:
            banker_draws = True
        elif banker == 3:
            banker_draws = v != 8
        elif banker == 4:
            banker_draws = 2 <= v <= 7
        elif banker == 5:
            banker_draws = 4 <= v <= 7
        elif banker == 6:
            banker_draws = v in (6, 7)
        else:
            banker_draws = False
        if banker_draws:
            banker = (banker + c6) % 10
            banker_cards = 3
    elif banker <= 5:
        banker = (banker + c5) % 10
        banker_cards = 3
    return Result(player, banker, player_cards, banker_cards)


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
