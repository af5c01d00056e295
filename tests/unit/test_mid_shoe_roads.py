"""A session that starts mid-shoe chooses its sides from the roads of the shoe's results so far, as a
player sitting down at a shoe under way sees them (docs/betting-systems.md: roads start again with each
shoe, not with each session). Before, every session began with an empty road, so that a chooser with
one-round sessions staked its `first` side throughout: follow_the_shoe's figures were flat_banker's."""

from decimal import Decimal

import numpy as np
import pytest

from pipeline.play import Round, play_session
from pipeline.session_kernel import play_sessions
from pipeline.systems import load_system

NET_HUNDREDTHS = {"banker": (95, -100, 0), "player": (-100, 100, 0)}  # by winner B, P, T
SIDES = ("banker", "player")


def _arrays(winners: str, shoe_lengths: list[int]) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    codes = np.array(["BPT".index(winner) for winner in winners], dtype=np.int8)
    shoe_ids = np.repeat(np.arange(len(shoe_lengths), dtype=np.int64), shoe_lengths)
    return shoe_ids, codes, {kind: np.array(table, dtype=np.int64)[codes] for kind, table in NET_HUNDREDTHS.items()}


def _rounds(shoe_ids, winners, nets) -> list[Round]:
    return [Round(int(shoe), "BPT"[winner], {kind: Decimal(int(net[index])) / 100 for kind, net in nets.items()})
            for index, (shoe, winner) in enumerate(zip(shoe_ids, winners))]


def _random_shoes(seed: int) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    generator = np.random.default_rng(seed)
    lengths = generator.integers(20, 60, size=4).tolist()
    winners = "".join(generator.choice(list("BPT"), size=sum(lengths), p=[0.46, 0.445, 0.095]))
    return _arrays(winners, lengths)


def _one_round(name: str):
    return load_system(name).with_session(max_rounds=1)


def _kernel_sides(system, arrays) -> list[str]:
    """The side each of the kernel's one-round sessions staked, one a round."""
    played = play_sessions(system, *arrays, 0, len(arrays[0]))
    assert played["start"].tolist() == list(range(len(arrays[0])))
    return ["player" if on_player else "banker" for on_player in played["wagered_player"] > 0]


def _reference_sides(system, rounds: list[Round]) -> list[str]:
    """The side each of the reference's one-round sessions staked, each seeing the rounds before it."""
    return [next(iter(play_session(system, rounds[index:], rounds[:index]).wagered_on)) for index in range(len(rounds))]


def _whole_shoe_sides(system, rounds: list[Round]) -> list[str]:
    """The side staked at each round by sessions of the reference, each playing its shoe from the shoe's
    first round on: the sides a player seated from the start of the shoe sees chosen."""
    whole = system.with_session(bankroll="1000000", goal="1000000", max_rounds=1_000_000)
    sides = []
    for index, played in enumerate(rounds):
        begin = next(i for i, earlier in enumerate(rounds) if earlier.shoe == played.shoe)
        before, after = (play_session(whole, rounds[begin:end]).wagered_on for end in (index, index + 1))
        sides += [next(side for side in SIDES if after.get(side, 0) > before.get(side, 0))]
    return sides


def test_follow_the_shoe_sitting_down_after_a_player_win_bets_player_not_flat_banker():
    arrays = _arrays("BPTP", [3, 1])
    rounds = _rounds(*arrays)
    follow, banker = _one_round("follow_the_shoe"), _one_round("flat_banker")
    assert _kernel_sides(follow, arrays) == ["banker", "banker", "player", "banker"]
    assert _kernel_sides(banker, arrays) == ["banker"] * 4
    mid_shoe = play_session(follow, rounds[2:], rounds[:2])  # a tie on round 3: a push
    assert mid_shoe.wagered_on == {"player": 10} and mid_shoe.end == 1000
    assert play_session(banker, rounds[2:], rounds[:2]).wagered_on == {"banker": 10}
    assert play_session(follow, rounds[3:], rounds[:3]).wagered_on == {"banker": 10}  # a new shoe: banker


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_one_round_session_follows_the_last_non_tie_winner_of_its_shoe_so_far(seed):
    shoe_ids, winners, nets = _random_shoes(seed)
    expected, last, shoe = [], "banker", None  # follow_the_shoe's first side: banker
    for shoe_id, winner in zip(shoe_ids, winners):
        last = "banker" if shoe_id != shoe else last
        expected.append(last)
        last, shoe = {0: "banker", 1: "player"}.get(int(winner), last), shoe_id
    assert _kernel_sides(_one_round("follow_the_shoe"), (shoe_ids, winners, nets)) == expected
    assert _reference_sides(_one_round("follow_the_shoe"), _rounds(shoe_ids, winners, nets)) == expected


@pytest.mark.parametrize("name", ["big_eye_boy_red", "big_road_column", "opposite_the_shoe"])
def test_a_one_round_session_stakes_the_side_a_session_seated_since_the_shoe_began_stakes(name):
    arrays = _random_shoes(11)
    rounds, system = _rounds(*arrays), _one_round(name)
    expected = _whole_shoe_sides(system, rounds)
    assert len(set(expected)) == 2
    assert _kernel_sides(system, arrays) == expected
    assert _reference_sides(system, rounds) == expected
