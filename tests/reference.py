"""An independent, plain-Python reference of the game, written from RULES.md without the
project's tables: the checker every engine in the project is compared against."""

from decimal import Decimal

from pipeline.rules import Result


def card_rank(code: int) -> int:
    return code // 4 + 1


def card_value(code: int) -> int:
    return card_rank(code) if card_rank(code) <= 9 else 0


def punto_banco_banker_draws(banker: int, v: int) -> bool:
    """RULES.md's Banker table, when the Player drew a third card worth v."""
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
        if punto_banco_banker_draws(banker, v):
            banker = (banker + c6) % 10
            banker_cards = 3
    elif banker <= 5:
        banker = (banker + c5) % 10
        banker_cards = 3
    return Result(player, banker, player_cards, banker_cards)


def reference_chemin_de_fer(p1, b1, p2, b2, c5, c6, player_draws_at_5: bool, banker_chooses):
    """Chemin de fer written out plainly from RULES.md: naturals end the round; the Player draws on
    0-4, stands on 6-7 and chooses at 5; banker_chooses(total, (b1, b2), v or None when the Player
    stood) says True or False where the Banker chooses, None where the punto banco table decides.
    Returns the final totals (Player, Banker)."""
    player, banker = (p1 + p2) % 10, (b1 + b2) % 10
    if player >= 8 or banker >= 8:
        return player, banker
    v, next_card = None, c5
    if player <= 4 or (player == 5 and player_draws_at_5):
        v, next_card = c5, c6
        player = (player + v) % 10
    choice = banker_chooses(banker, (b1, b2), v)
    fixed = banker <= 5 if v is None else punto_banco_banker_draws(banker, v)
    if fixed if choice is None else choice:
        banker = (banker + next_card) % 10
    return player, banker


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
