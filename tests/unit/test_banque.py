"""Baccarat banque: the exact value of a policy profile, checked by brute force and by the chemin de fer
evaluator; the simulator, checked against the exact values and by a plain-Python replay of its rounds;
and the bad input."""

import itertools
import json
import random
from collections import defaultdict
from decimal import Decimal
from fractions import Fraction
from functools import cache

import numpy as np
import pyarrow.compute as pc
import pytest

from pipeline.cards import CODE_VALUES
from pipeline.errors import BaccaratError
from pipeline.games.banque import (
    COLUMNS,
    NATURAL_PAID,
    Profile,
    banque_value,
    known_policies,
    load_policy,
    player_strategies,
    profile_of,
    with_replacement,
)
from pipeline.games.banque_counts import count_shoe, finite_gains, shoe_value
from pipeline.games.strategies import (
    HAND_TOTALS,
    load_strategy,
    player_draw_probabilities,
)
from pipeline.games.value import (
    BANKER_WINS,
    DRAW,
    INFINITE,
    PLAYER_WINS,
    STAND,
    against_player,
    count_deals,
    pair_value,
)
from pipeline.rule_sets import load_rule_set
from pipeline.rules import PLAYER_STOOD, load_draw_rules
from pipeline.simulate.banque import WITH_REPLACEMENT, BanqueDealer
from pipeline.simulate.kernel import rng_seed, shuffled_shoe

PLAYERS = ["banque_player_draws_at_5", "banque_player_stands_at_5", "banque_player_draws_at_5_with_9_11"]
TINY = [3, 1, 0, 0, 0, 2, 0, 1, 0, 0]  # values 0, 1, 5 and 7: naturals (1+7), stood 6 and 7, the option at 5


@cache
def banque(stake_share: str = "0.5", pays: str = "1"):
    document = load_rule_set("banque").model_dump()
    document["two_hands"]["stake_share"] = Decimal(stake_share)
    document["bets"]["banker"]["pays"] = Decimal(pays)
    return type(load_rule_set("banque")).model_validate(document)


def profile(policy: str, first: str, second: str | None = None, stake_share="0.5", pays="1", gains=None):
    rule_set = banque(stake_share, pays)
    strategies = player_strategies(rule_set, first if second is None else f"{first},{second}")
    return profile_of(rule_set, load_policy(policy), strategies, gains)


# --- brute force: every card and every decision, one at a time ---------------------------------------

class Cards:
    """The cards left to deal: `held[v]` of each value, dealt with or without replacement."""

    def __init__(self, held: list[int], replacement: bool):
        self.held, self.step = list(held), 0 if replacement else 1

    def choices(self):
        """(value, chance) of the next card, taking it out while the caller walks on."""
        left = sum(self.held)
        for v, count in enumerate(self.held):
            if count:
                self.held[v] -= self.step
                yield v, Fraction(count, left)
                self.held[v] += self.step


def brute_force(prof: Profile, held: list[int], replacement: bool = True) -> tuple[list[Fraction], list[Fraction]]:
    """(player wins, banker wins) per hand, by walking every card and every decision one at a time. The
    rest of a round depends on the first six cards through the hands' totals and the cards left only, so
    deals alike in both are summed first and played on once."""
    cards = Cards(held, replacement)
    wins = {"player": [Fraction(0)] * 2, "banker": [Fraction(0)] * 2}
    dealt_alike = defaultdict(Fraction)  # (totals, cards left): the chance of dealing them

    def deal(dealt: list[int], chance: Fraction):
        if len(dealt) < 6:
            for v, p in cards.choices():
                deal(dealt + [v], chance * p)
            return
        totals = tuple((dealt[h] + dealt[h + 3]) % 10 for h in range(3))
        dealt_alike[totals, tuple(cards.held)] += chance
    deal([], Fraction(1))
    for (totals, left), chance in dealt_alike.items():
        cards.held = list(left)
        for weight, finals, paid in _play(prof, cards, list(totals)):
            for h in range(2):
                if paid[h] or finals[h] > finals[2]:
                    wins["player"][h] += chance * weight
                elif finals[h] < finals[2]:
                    wins["banker"][h] += chance * weight
    return wins["player"], wins["banker"]


def _play(prof, cards: Cards, totals: list[int]):
    """(probability, final totals, natural paid per hand) of every way the round can go on from the
    hands' two-card totals."""
    if totals[2] >= 8 or (totals[0] >= 8 and totals[1] >= 8):
        return [(Fraction(1), totals, [False, False])]
    paid = [totals[h] >= 8 for h in range(2)]
    outcomes = []

    def hand(h: int, chance: Fraction, thirds: list, columns: list):
        if h == 2:
            return banker(chance, thirds, columns)
        if paid[h]:
            return hand(h + 1, chance, thirds + [None], columns + [NATURAL_PAID])
        q = prof.player_draw[h][totals[h]]
        if q != 1:
            hand(h + 1, chance * (1 - q), thirds + [None], columns + [PLAYER_STOOD])
        if q != 0:
            for v, p in cards.choices():
                hand(h + 1, chance * q * p, thirds + [v], columns + [v])

    def banker(chance: Fraction, thirds: list, columns: list):
        finals = [(totals[h] + (thirds[h] or 0)) % 10 for h in range(2)]
        d = prof.banker_draw[totals[2], columns[0], columns[1]]
        if d != 1:
            outcomes.append((chance * (1 - d), finals + [totals[2]], paid))
        if d != 0:
            outcomes.extend((chance * d * p, finals + [(totals[2] + v) % 10], paid) for v, p in cards.choices())

    hand(0, Fraction(1), [], [])
    return outcomes


@pytest.mark.parametrize(("policy", "first", "second", "share"), [
    ("banque_banker_maximises_expected_total", "banque_player_draws_at_5_with_9_11", "banque_player_stands_at_5", "0.3"),
    ("banque_banker_follows_larger_stake", "banque_player_stands_at_5", "banque_player_draws_at_5_with_9_11", "0.5"),
    ("banque_banker_follows_punto_banco", "banque_player_draws_at_5", None, "0.8"),
])
def test_exact_value_is_the_brute_force_sum_over_a_tiny_deck(policy, first, second, share):
    prof = profile(policy, first, second, share, pays="0.95", gains=with_replacement(TINY))
    value = banque_value(prof, TINY)
    player_wins, banker_wins = brute_force(prof, TINY)
    assert list(value.player_wins) == player_wins and list(value.banker_wins) == banker_wins
    assert value.banker == sum(s * (Fraction(19, 20) * b - p)
                               for s, b, p in zip(prof.stakes, banker_wins, player_wins))


@cache
def counted(shoe) -> object:
    return count_shoe(load_draw_rules("banque"), shoe)


MIXED = ("banque_player_draws_at_5_with_9_11", "banque_player_stands_at_5")


@pytest.mark.parametrize("policy", ["banque_banker_maximises_expected_total", "banque_banker_follows_larger_stake",
                                    "banque_banker_follows_punto_banco"])
def test_the_shoe_counter_with_replacement_equals_the_infinite_deck_evaluator(policy):
    prof = profile(policy, *MIXED, stake_share="0.35", pays="0.95")
    assert shoe_value(counted(INFINITE), prof) == banque_value(prof)


TINY_SHOE = (3, 2, 0, 0, 0, 2, 0, 2, 0, 0)  # 9 cards: every one is dealt when three hands draw


@pytest.mark.parametrize(("policy", "share"), [("banque_banker_maximises_expected_total", "0.3"),
                                               ("banque_banker_follows_larger_stake", "0.5")])
def test_the_shoe_counter_is_the_brute_force_sum_over_a_tiny_shoe(policy, share):
    counts = count_shoe(load_draw_rules("banque"), list(TINY_SHOE))
    prof = profile(policy, *MIXED, stake_share=share, pays="0.95", gains=finite_gains(counts))
    value = shoe_value(counts, prof)
    player_wins, banker_wins = brute_force(prof, list(TINY_SHOE), replacement=False)
    assert list(value.player_wins) == player_wins and list(value.banker_wins) == banker_wins


def test_a_larger_shoe_comes_nearer_the_infinite_deck_as_one_over_decks():
    prof = profile("banque_banker_follows_larger_stake", *MIXED)
    infinite = banque_value(prof).banker
    gaps = [shoe_value(counted(tuple(d * c for c in (64, 16, 16, 16, 16, 16, 16, 16, 16, 16))), prof).banker - infinite
            for d in (25, 100)]  # 100 and 400 decks
    assert gaps[0] != 0 and abs(gaps[1] * 4 / gaps[0] - 1) < 0.05


def test_the_maximising_banker_best_responds_in_a_finite_shoe_too():
    counts = counted(3)
    best = profile("banque_banker_maximises_expected_total", *MIXED, stake_share="0.6", gains=finite_gains(counts))
    value = shoe_value(counts, best).banker
    assert value > shoe_value(counts, profile("banque_banker_maximises_expected_total", *MIXED, "0.6")).banker
    rng = random.Random(3)
    table = best.banker_draw.copy()
    for _ in range(30):
        cell = rng.randrange(8), rng.randrange(COLUMNS), rng.randrange(COLUMNS)
        table[cell] = 1 - table[cell]
    assert shoe_value(counts, Profile(best.stake_share, best.commission, best.player_draw, table)).banker < value


def test_a_shoe_too_small_for_a_round_is_refused():
    with pytest.raises(BaccaratError, match="at least nine cards"):
        count_shoe(load_draw_rules("banque"), [8, 0, 0, 0, 0, 0, 0, 0, 0, 0])


def test_a_hand_the_banker_follows_plays_chemin_de_fer_against_the_punto_banco_banker():
    parlor = load_rule_set("chemin_de_fer_parlor")
    banker = load_strategy("chemin_de_fer_parlor_banker_follows_punto_banco")
    for at_5 in ("draws_at_5", "stands_at_5"):
        chemin = pair_value(parlor, INFINITE, load_strategy(f"chemin_de_fer_parlor_player_{at_5}"), banker)
        led = banque_value(profile("banque_banker_follows_larger_stake", f"banque_player_{at_5}",
                                   "banque_player_draws_at_5_with_9_11", stake_share="0.6"))
        assert (led.player_wins[0], led.banker_wins[0]) == (chemin.player_wins, chemin.banker_wins)
        assert led.hand(1) != led.hand(0)  # the Banker's choices serve hand 1, and hand 2 gains by it


def test_swapping_the_hands_and_their_stakes_swaps_their_values():
    one = banque_value(profile("banque_banker_maximises_expected_total", PLAYERS[0], PLAYERS[1], "0.7"))
    other = banque_value(profile("banque_banker_maximises_expected_total", PLAYERS[1], PLAYERS[0], "0.3"))
    assert (one.player_wins, one.banker) == (other.player_wins[::-1], other.banker)


def test_maximising_the_expected_total_is_a_best_response():
    """No other Banker table does better against the same Players: every shipped policy, and tables
    the maximising one with random cells flipped."""
    best = profile("banque_banker_maximises_expected_total", PLAYERS[2], PLAYERS[1], "0.65")
    value = banque_value(best).banker
    for policy in known_policies():
        assert banque_value(profile(policy, PLAYERS[2], PLAYERS[1], "0.65")).banker <= value
    rng = random.Random(12)
    for _ in range(2):
        table = best.banker_draw.copy()
        for _ in range(30):
            cell = rng.randrange(8), rng.randrange(COLUMNS), rng.randrange(COLUMNS)
            table[cell] = 1 - table[cell]
        flipped = banque_value(Profile(best.stake_share, best.commission, best.player_draw, table)).banker
        assert flipped <= value
    assert flipped < value  # 30 cells flipped cost him something


def chemin_de_fer_best_response(player: str):
    """The Banker's best response to a chemin de fer Player, cell by cell, by the chemin de fer evaluator."""
    draw = load_draw_rules("chemin_de_fer_parlor")
    against = against_player(count_deals(draw, INFINITE),
                             player_draw_probabilities(draw, load_strategy(f"chemin_de_fer_parlor_player_{player}")))
    gain = against.by_cell[..., BANKER_WINS] - against.by_cell[..., PLAYER_WINS]  # [a, b, column, action]
    best = np.zeros((10, 10, PLAYER_STOOD + 1), dtype=object)
    for total, column in itertools.product(range(8), range(PLAYER_STOOD + 1)):
        hands = HAND_TOTALS == total
        best[hands, column] = Fraction(int((gain[hands, column, DRAW] - gain[hands, column, STAND]).sum() > 0))
    return against.value(best)


@pytest.mark.parametrize("player", ["draws_at_5", "stands_at_5"])
def test_with_almost_all_the_stake_on_hand_1_the_maximising_banker_best_responds_to_it(player):
    chemin = chemin_de_fer_best_response(player)
    led = banque_value(profile("banque_banker_maximises_expected_total", f"banque_player_{player}",
                               "banque_player_draws_at_5_with_9_11", stake_share="0.9999"))
    assert (led.player_wins[0], led.banker_wins[0]) == (chemin.player_wins, chemin.banker_wins)


def test_theta_changes_what_the_maximising_banker_does():
    tables = [profile("banque_banker_maximises_expected_total", PLAYERS[0], stake_share=share).banker_draw
              for share in ("0.1", "0.5", "0.9")]
    assert not (tables[0] == tables[1]).all() and not (tables[1] == tables[2]).all()


# --- simulation ----------------------------------------------------------------------------------------

def simulated(prof: Profile, decks: int, shoes: int, seed: int = 5, stake_share="0.5"):
    return BanqueDealer(banque(stake_share), prof, decks, rounds_per_stream=100).deal(seed, 0, shoes)


PROFILES = [(policy, player, None, "0.5") for policy in
            ("banque_banker_maximises_expected_total", "banque_banker_follows_larger_stake",
             "banque_banker_follows_punto_banco") for player in PLAYERS]
PROFILES.append(("banque_banker_maximises_expected_total", PLAYERS[2], PLAYERS[1], "0.7"))


def test_every_shipped_policy_is_simulated():
    assert {policy for policy, *_ in PROFILES} == set(known_policies())


@pytest.mark.slow
@pytest.mark.parametrize(("policy", "first", "second", "share"), PROFILES)
def test_simulated_values_agree_with_the_exact_values(policy, first, second, share):
    prof = profile(policy, first, second, share)
    value = banque_value(prof)
    rounds = simulated(prof, WITH_REPLACEMENT, 10_000, stake_share=share)  # a million rounds, with replacement
    assert rounds.num_rows == 1_000_000
    stakes = [float(s) for s in prof.stakes]
    for column, exact in [("net_banker", value.banker), ("net_hand1", value.hand(0) * prof.stakes[0]),
                          ("net_hand2", value.hand(1) * prof.stakes[1])]:
        nets = pc.cast(rounds.column(column), "float64").to_numpy()
        error = nets.std() / len(nets) ** 0.5
        assert abs(nets.mean() - float(exact)) < 4 * error, column
    assert stakes[0] + stakes[1] == 1


@pytest.mark.slow
def test_a_simulated_3_deck_shoe_agrees_with_its_exact_value():
    counts = counted(3)
    prof = profile("banque_banker_maximises_expected_total", *MIXED, stake_share="0.7", gains=finite_gains(counts))
    value = shoe_value(counts, prof)
    rounds = simulated(prof, 3, 54_000, stake_share="0.7")
    assert rounds.num_rows >= 1_000_000
    for column, exact in [("net_banker", value.banker), ("net_hand1", value.hand(0) * prof.stakes[0]),
                          ("net_hand2", value.hand(1) * prof.stakes[1])]:
        nets = pc.cast(rounds.column(column), "float64").to_numpy()
        assert abs(nets.mean() - float(exact)) < 4 * nets.std() / len(nets) ** 0.5, column


def test_runs_are_deterministic_and_a_range_deals_as_in_a_larger_run():
    prof = profile("banque_banker_maximises_expected_total", PLAYERS[2])
    dealer = BanqueDealer(banque(), prof, 3)
    whole = dealer.deal(11, 0, 40)
    assert whole.equals(dealer.deal(11, 0, 40))
    part = dealer.deal(11, 25, 15)
    assert part.equals(whole.filter(pc.greater_equal(whole.column("shoe_id"), 25)))
    assert not whole.equals(dealer.deal(12, 0, 40))


# --- a replay of simulated rounds that does not trust the kernel -------------------------------------

CARD_COLUMNS = [f"{hand}_card{i}" for hand in ("hand1", "hand2", "banker") for i in (1, 2, 3)]


def replay_shoe(rows: list[dict], shoe: list[int], prof: Profile, rule_set) -> None:
    """Deal the shoe again round by round in plain Python and check every recorded field."""
    value = {code: int(CODE_VALUES[code]) for code in range(52)}
    position = 1 + (value[shoe[0]] or rule_set.burn.ten_value_burns)
    stakes = [Decimal(str(s.numerator / s.denominator)) for s in prof.stakes]
    keep = 1 - Decimal(prof.commission.numerator) / prof.commission.denominator
    for number, row in enumerate(rows, start=1):
        assert row["round"] == number
        cards = [[shoe[position + h], shoe[position + 3 + h]] for h in range(3)]
        position += 6
        totals = [(value[a] + value[b]) % 10 for a, b in cards]
        natural = [t >= 8 for t in totals]
        options, banker_decision = [None, None], None
        if not natural[2] and not (natural[0] and natural[1]):
            columns = []
            for h in range(2):
                if natural[h]:
                    columns.append(NATURAL_PAID)
                    continue
                q = prof.player_draw[h][totals[h]]
                draws = row[f"hand{h + 1}_option"] == "draw" if 0 < q < 1 else q == 1
                if totals[h] == 5:
                    options[h] = "draw" if draws else "stand"
                columns.append(PLAYER_STOOD)
                if draws:
                    cards[h].append(shoe[position])
                    position += 1
                    columns[h] = value[cards[h][2]]
                    totals[h] = (totals[h] + columns[h]) % 10
            draws = prof.banker_draw[totals[2], columns[0], columns[1]] == 1
            banker_decision = "draw" if draws else "stand"
            if draws:
                cards[2].append(shoe[position])
                position += 1
                totals[2] = (totals[2] + value[cards[2][2]]) % 10
        assert [row[c] for c in CARD_COLUMNS] == [hand[i] if i < len(hand) else None for hand in cards for i in range(3)]
        assert [row["hand1_total"], row["hand2_total"], row["banker_total"]] == totals
        assert [row["hand1_option"], row["hand2_option"], row["banker_decision"]] == [*options, banker_decision]
        banker_net = Decimal(0)
        for h in range(2):
            won = (natural[h] and not natural[2]) or totals[h] > totals[2]
            outcome = "P" if won else "T" if totals[h] == totals[2] else "B"
            assert row[f"hand{h + 1}_outcome"] == outcome
            net = {"P": stakes[h], "T": Decimal(0), "B": -stakes[h]}[outcome]
            assert row[f"net_hand{h + 1}"] == net
            banker_net += -net if outcome != "B" else keep * stakes[h]
        assert row["net_banker"] == banker_net
    assert position >= len(shoe) - rule_set.cut_card.cards_from_end  # dealt up to the cut card, and no further
    assert len(shoe) - position < rule_set.cut_card.cards_from_end + 2 * 9


@pytest.mark.parametrize("policy", ["banque_banker_maximises_expected_total", "banque_banker_follows_larger_stake"])
def test_replayed_rounds_match_the_simulated_ones(policy):
    rule_set = banque("0.6", "0.95")
    prof = profile(policy, PLAYERS[2], PLAYERS[1], "0.6", pays="0.95")
    rounds = BanqueDealer(rule_set, prof, 3).deal(21, 0, 6)
    options = 0
    for shoe_id in range(6):
        rows = [row for row in rounds.to_pylist() if row["shoe_id"] == shoe_id]
        replay_shoe(rows, list(shuffled_shoe(np.uint64(rng_seed(21, shoe_id)), 3)), prof, rule_set)
        options += sum(row["hand1_option"] is not None for row in rows)
    assert options > 0  # hand 1's mixed option at 5 arose, and was replayed


def test_a_pure_option_is_recorded_and_a_natural_round_records_no_banker_decision():
    rounds = simulated(profile("banque_banker_follows_punto_banco", PLAYERS[1]), 3, 20).to_pylist()
    decided = [r for r in rounds if r["banker_decision"] is not None]
    assert {r["hand1_option"] for r in decided if r["hand1_card3"] is None and r["hand1_total"] == 5} == {"stand"}
    assert {r["hand1_option"] for r in decided if r["hand1_card3"] is not None} == {None}  # 0-4 draw, no choice
    naturals = [r for r in rounds if r["banker_card3"] is None and r["banker_decision"] is None]
    assert naturals and all(r["banker_total"] >= 8 or (r["hand1_total"] >= 8 and r["hand2_total"] >= 8)
                            for r in naturals)


# --- the command line and the bad input ---------------------------------------------------------------

def test_odds_json_gives_the_exact_value(cli):
    status, out, err = cli("odds", "--rules", "banque", "--banker-policy", "banque_banker_follows_larger_stake",
                           "--player-strategy", "banque_player_draws_at_5,banque_player_stands_at_5", "--decks", "infinite",
                           "--json")
    assert (status, err) == (0, "")
    document = json.loads(out)
    expected = banque_value(profile("banque_banker_follows_larger_stake", PLAYERS[0], PLAYERS[1]))
    assert document["decks"] == INFINITE and document["stake_share"] == "1/2"
    assert Fraction(document["value"]["banker"]) == expected.banker
    assert [Fraction(document["value"][h]) for h in ("hand1", "hand2")] == [expected.hand(0), expected.hand(1)]


def test_odds_table_names_the_default_profile(cli):
    status, out, _ = cli("odds", "--rules", "banque")
    assert status == 0 and "banque_banker_maximises_expected_total" in out and "banker gain per unit" in out


BAD_RULES = [
    ({"stake_share": "0"}, "stake_share (theta, the first hand's share of the stakes) must be strictly between 0 and 1"),
    ({"stake_share": "1"}, "must be strictly between 0 and 1"),
    ({"stake_share": "-0.5"}, "must be strictly between 0 and 1"),
    ({"stake_share": "1.5"}, "must be strictly between 0 and 1"),
    ({"stake_share": "0.12345"}, "with at most 4 decimals"),
    ({"stake_share": "half"}, "two_hands.stake_share: Input should be a valid decimal"),
    ({"stake_share": "NaN"}, "two_hands.stake_share: Input should be a finite number"),
    ({"theta": "0.5", "stake_share": "0.5"}, "two_hands.theta: Extra inputs are not permitted"),
]


@pytest.mark.parametrize(("two_hands", "message"), BAD_RULES)
def test_bad_stake_share_is_one_line(cli, rules_file, two_hands, message):
    status, out, err = cli("odds", "--rules", rules_file({"two_hands": two_hands}, base="banque"))
    assert status == 2 and out == "" and err.count("\n") == 1 and err.startswith("error: ") and message in err


@pytest.mark.parametrize(("changes", "message"), [
    ({"bets": {"player": {"pays": "1"}, "banker": {"pays": "0.8"}}}, "the commission must be 0 to 0.1"),
    ({"draw_rules": "punto_banco", "bets": {"player": {"pays": "1"}}}, "two_hands (baccarat banque) needs a draw"),
    ({"cut_card": {"cards_from_end": 14, "extra_round": True}}, "with 3 decks it must be 17 to"),
])
def test_bad_banque_rule_sets_are_one_line(cli, rules_file, changes, message):
    status, _, err = cli("odds", "--rules", rules_file(changes, base="banque"))
    assert status == 2 and err.count("\n") == 1 and message in err


@pytest.mark.parametrize(("document", "message"), [
    ({"rule": "maximise_expected_total"}, "on_equal (draw or stand) is given for maximise_expected_total"),
    ({"rule": "maximise_expected_total", "on_equal": "stand", "when_split": "draw"}, "when_split (draw, stand or"),
    ({"rule": "follow_the_crowd"}, "rule: Input should be 'maximise_expected_total' or 'follow_punto_banco'"),
    ({"rule": "follow_punto_banco", "when_split": "toss"}, "when_split: Input should be 'draw', 'stand'"),
])
def test_bad_policies_are_one_line(cli, tmp_path, document, message):
    path = tmp_path / "policy.yaml"
    path.write_text(json.dumps({"name": "bad", **document}))
    status, _, err = cli("odds", "--rules", "banque", "--banker-policy", path)
    assert status == 2 and err.count("\n") == 1 and message in err


@pytest.mark.parametrize(("args", "message"), [
    (["--banker-strategy", "chemin_de_fer_banker_follows_punto_banco"], "give --banker-policy NAME"),
    (["--player-strategy", "chemin_de_fer_player_draws_at_5"], "is for the game 'chemin_de_fer'"),
    (["--player-strategy", "a,b,c"], "one strategy for both hands or two as NAME1,NAME2"),
    (["--player-strategy", "banque_player_draws_at_5,"], "one strategy for both hands or two"),
    (["--banker-policy", "nope"], "unknown banque policy 'nope'"),
])
def test_bad_banque_arguments_are_one_line(cli, args, message):
    status, out, err = cli("odds", "--rules", "banque", *args)
    assert status == 2 and out == "" and err.count("\n") == 1 and message in err


def test_banque_options_elsewhere_and_the_solver_refuse_in_one_line(cli):
    status, _, err = cli("odds", "--banker-policy", "banque_banker_follows_punto_banco")
    assert status == 2 and "--banker-policy is for baccarat banque" in err
    status, _, err = cli("solve", "--rules", "banque")
    assert status == 2 and err.count("\n") == 1 and "the solver is for chemin de fer" in err


def test_the_draw_table_gives_each_hand_its_option_at_5():
    draw = load_draw_rules("banque")
    assert list(np.flatnonzero(draw.player_options)) == [5] and draw.banker_options[:8].all()


def test_one_hand_rule_sets_dump_as_before_so_their_runs_keep_their_parameters():
    assert "two_hands" not in load_rule_set("punto_banco").model_dump(mode="json")
    assert load_rule_set("banque").model_dump(mode="json")["two_hands"] == {"stake_share": "0.5"}


@pytest.mark.parametrize(("args", "message"), [
    (["--rules", "banque", "--banker-strategy", "chemin_de_fer_banker_follows_punto_banco"], "give --banker-policy"),
    (["--rules", "banque", "--banker-policy", "nope"], "unknown banque policy 'nope'"),
    (["--rules", "banque", "--player-strategy", "a,b,c"], "one strategy for both hands or two"),
    (["--banker-policy", "banque_banker_follows_punto_banco"], "--decks and --banker-policy are for baccarat banque"),
    (["--decks", "infinite"], "--decks and --banker-policy are for baccarat banque"),
])
def test_bad_banque_simulations_are_one_line_and_write_nothing(cli, tmp_path, args, message):
    status, out, err = cli("simulate", "--shoes", 10, "--seed", 1, "--out", tmp_path / "data", *args)
    assert status == 2 and out == "" and err.count("\n") == 1 and message in err
    assert not (tmp_path / "data").exists()

