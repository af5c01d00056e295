"""Betting systems as validated configuration, and one session played over hand-made rounds."""

import random
from decimal import Decimal
from fractions import Fraction

import numpy as np
import polars as pl
import pytest
import yaml

from pipeline.errors import BaccaratError
from pipeline.marts.engines import Engine, outcomes_table, road_cells
from pipeline.play import ENDINGS, Round, _BigRoad, play_session
from pipeline.risk import RiskQuestion, net_distribution, risk
from pipeline.session_kernel import play_sessions
from pipeline.systems import DERIVED_ROADS, MAX_COUNT, MAX_MONEY, known_systems, load_system
from pipeline.rule_sets import load_rule_set

REQUIRED = ["flat_banker", "flat_player", "martingale_player_32", "martingale_player_512", "martingale_banker",
            "paroli_player", "one_three_two_six_banker", "dalembert_banker", "fibonacci_player", "follow_the_shoe",
            "big_road_column"]


def test_the_shipped_systems_load_and_fit_the_default_table():
    assert set(REQUIRED) <= set(known_systems())
    punto_banco = load_rule_set("punto_banco")
    for name in known_systems():
        system = load_system(name).check_rules(punto_banco.bets)
        assert system.name == name and system.session.bankroll >= system.unit
    assert load_system("martingale_player_32").table.maximum == 32 * load_system("martingale_player_32").unit
    assert load_system("martingale_player_512").table.maximum == 512 * load_system("martingale_player_512").unit


def _merged(document: dict, changes: dict) -> dict:
    """`changes` merged into a system's document, one level deep; None deletes a key."""
    merged = {**document, **{key: {**document[key], **value} if isinstance(value, dict)
                             and isinstance(document.get(key), dict) else value for key, value in changes.items()}}
    return {key: value for key, value in merged.items() if value is not None}


@pytest.fixture
def system_file(tmp_path):
    """A variant of a shipped system written to tmp_path; returns its path."""

    def write(changes: dict, base: str = "martingale_player_32"):
        path = tmp_path / "system.yaml"
        document = load_system(base).model_dump(mode="json", exclude_unset=True)
        path.write_text(yaml.safe_dump(_merged(document, changes)))
        return str(path)

    return write


@pytest.mark.parametrize("changes, message", [
    ({"colour": "red"}, "colour: Extra inputs are not permitted"),
    ({"session": {"bankrol": "100"}}, "session.bankrol: Extra inputs are not permitted"),
    ({"unit": "-10"}, "unit: Input should be greater than 0"),
    ({"unit": "10.005"}, "unit: Decimal input should have no more than 2 decimal places"),
    ({"table": {"maximum": "5"}}, "the table maximum 5 is below the unit 10"),
    ({"table": {"minimum": "25"}}, "the unit 10 is below the table minimum 25"),
    ({"session": {"goal": "0"}}, "session.goal: Input should be greater than 0"),
    ({"session": {"bankroll": "5"}}, "the bankroll 5 cannot cover one stake of 10"),
    ({"session": {"stop_loss": "2000"}}, "the stop-loss 2000 is more than the bankroll 1000"),
    ({"session": {"bankroll": "1e3", "stop_loss": "1e5"}}, "the stop-loss 100000 is more than the bankroll 1000"),
    ({"session": {"max_rounds": 0}}, "session.max_rounds: Input should be greater than or equal to 1"),
    ({"bet": "insurance"}, "unknown bet kind 'insurance'"),
    ({"bet": {"choose": "hunch"}}, "bet.chooser.choose: Input should be 'same_side'"),
    ({"bet": {"choose": "derived_road_colour"}}, "road (big_eye_boy, small_road, cockroach_pig) is given"),
    ({"progression": {"kind": "double_or_nothing"}}, "progression.kind: Input should be"),
    ({"progression": {"paroli_wins": 3}}, "paroli_wins is an option of the paroli progression only"),
    ({"progression": {"at_max": "double"}}, "progression.at_max: Input should be 'stay' or 'reset'"),
    ({"unit": None}, "unit: Field required"),
    ({"bet": 7}, "bet.chooser: Input should be a valid dictionary"),
])
def test_a_bad_system_file_is_one_line(system_file, changes, message):
    with pytest.raises(BaccaratError) as error:
        load_system(system_file(changes))
    assert message in str(error.value) and "\n" not in str(error.value)


@pytest.mark.parametrize("amount", ["1e400", "50000000000000000", "1000000000000.01"])
def test_a_bankroll_too_large_for_the_sessions_cents_was_a_traceback_in_the_spark_task(amount):
    """The backtest plays in 64-bit cents and writes decimal(18,2): an amount past MAX_MONEY is refused
    when the system is validated, in one line, before any task starts."""
    with pytest.raises(BaccaratError) as error:
        load_system("flat_banker").with_session(bankroll=Decimal(amount))
    assert f"--bankroll {Decimal(amount)}: Input should be less than or equal to 1000000000000" in str(error.value)
    assert "\n" not in str(error.value)
    assert load_system("flat_banker").with_session(bankroll=MAX_MONEY).session.bankroll == MAX_MONEY


@pytest.mark.parametrize("changes, message", [
    ({"session": {"max_rounds": 10**20}}, "session.max_rounds: Input should be less than or equal to 1000000000000"),
    ({"progression": {"kind": "labouchere", "line": [1, 10**20]}},
     "progression.line.1: Input should be less than or equal to 1000000000000"),
])
def test_a_round_limit_or_labouchere_number_past_int64_was_a_traceback_in_the_spark_task(system_file, changes,
                                                                                          message):
    """The session kernel holds both in 64-bit integers: past them numba failed to type its arguments in
    every backtest task. Refused in one line when the system is validated; the bound itself plays."""
    with pytest.raises(BaccaratError) as error:
        load_system(system_file(changes))
    assert message in str(error.value) and "\n" not in str(error.value)
    largest = load_system(system_file({"session": {"max_rounds": MAX_COUNT},
                                       "progression": {"kind": "labouchere", "line": [MAX_COUNT]}}))
    rounds = [Round(1, "B", {"banker": Decimal("0.95"), "player": Decimal(-1), "tie": Decimal(-1)})] * 3
    shoe_ids, winners = np.ones(3, dtype=np.int64), np.zeros(3, dtype=np.int8)
    nets = {"player": np.full(3, -100, dtype=np.int64)}
    reference, played = play_session(largest, rounds), play_sessions(largest, shoe_ids, winners, nets, 0, 3)
    assert (reference.ended, reference.rounds) == ("incomplete", 3)
    assert (ENDINGS[played["ended"][0]], played["rounds"][0]) == ("incomplete", 3)


@pytest.mark.parametrize("changes, message", [
    ({"session": {"max_rounds": True}}, "session.max_rounds: Input should be a valid integer"),
    ({"session": {"max_rounds": 50.0}}, "session.max_rounds: Input should be a valid integer"),
    ({"progression": {"kind": "paroli", "paroli_wins": True}}, "progression.paroli_wins: Input should be a valid integer"),
    ({"progression": {"kind": "labouchere", "line": [1, True]}}, "progression.line.1: Input should be a valid integer"),
])
def test_a_boolean_where_a_whole_number_belongs_was_taken_for_one(system_file, changes, message):
    """`max_rounds: true` loaded as a one-round limit: a wrong type in a system file is refused in one line."""
    with pytest.raises(BaccaratError) as refused:
        load_system(system_file(changes))
    assert message in str(refused.value) and "\n" not in str(refused.value)


def test_an_unknown_system_is_one_line_naming_the_known_ones():
    with pytest.raises(BaccaratError, match=r"unknown system 'hunch' \(known: big_eye_boy_red, "):
        load_system("hunch")


def test_a_bet_the_table_does_not_offer_is_refused(system_file):
    system = load_system(system_file({"bet": "dragon_7"}))
    with pytest.raises(BaccaratError, match="bets on dragon_7, which the rule set does not offer"):
        system.check_rules(load_rule_set("punto_banco").bets)


def test_session_parameters_can_be_replaced_and_are_validated_again():
    system = load_system("flat_banker")
    assert system.with_session(goal=Decimal(50), max_rounds=None).session.goal == 50
    with pytest.raises(BaccaratError, match="cannot cover one stake"):
        system.with_session(bankroll=Decimal(1))


@pytest.mark.parametrize(("changes", "said"), [
    ({"bankroll": "x"}, "--bankroll x: Input should be a valid decimal"),
    ({"goal": "-5", "bankroll": "100"}, "--goal -5: Input should be greater than 0"),
    ({"stop_loss": ""}, "--stop-loss '': Input should be a valid decimal"),
    ({"max_rounds": 0}, "--max-rounds 0: Input should be greater than or equal to 1"),
    ({"bankroll": "0.5"}, "system 'flat_banker' with --bankroll 0.5: the bankroll 0.5 cannot cover one stake of 10"),
])
def test_a_bad_session_option_was_named_by_the_system_file_s_key(changes, said):
    """`baccarat backtest --bankroll x` said "system 'flat_banker': session.bankroll: Input should be a valid
    decimal": the YAML key of a file the user never wrote. The line names the option, as it was given."""
    with pytest.raises(BaccaratError) as refused:
        load_system("flat_banker").with_session(**changes)
    assert str(refused.value) == said


NETS = {"B": {"banker": Decimal("0.95"), "player": Decimal(-1), "tie": Decimal(-1)},
        "P": {"banker": Decimal(-1), "player": Decimal(1), "tie": Decimal(-1)},
        "T": {"banker": Decimal(0), "player": Decimal(0), "tie": Decimal(8)}}


def _rounds(winners: str, shoe: int = 0) -> list[Round]:
    return [Round(shoe, winner, NETS[winner]) for winner in winners]


def _system(name: str, **changes):
    system = load_system(name)
    return type(system).model_validate(_merged(system.model_dump(exclude_unset=True), changes))


def test_flat_banker_settles_the_commission_in_exact_cents():
    system = _system("flat_banker", session={"goal": "28", "max_rounds": None})
    result = play_session(system, _rounds("BPTBBB" + "P" * 10))  # 9.50 - 10 + 0 + 3 x 9.50: the goal, exactly
    assert (result.ended, result.rounds, result.stakes) == ("goal", 6, 6)
    assert result.end == Decimal("1028.00") and result.wagered == 60 and result.max_drawdown == 10


def test_martingale_doubles_starts_over_above_the_table_maximum_and_counts_it():
    system = _system("martingale_player_32", table={"maximum": "40"}, session={"max_rounds": 5})
    result = play_session(system, _rounds("BBBBP"))  # stakes 10, 20, 40, then 80 > 40: 10, then 20
    assert result.wagered == 100 and result.table_max_hits == 1 and result.end == 1000 - 70 - 10 + 20
    assert result.ended == "max_rounds" and result.max_drawdown == 80
    staying = _system("martingale_player_32", table={"maximum": "40"}, progression={"at_max": "stay"},
                      session={"max_rounds": 5})
    stayed = play_session(staying, _rounds("BBBBP"))
    assert stayed.wagered == 10 + 20 + 40 + 40 + 40 and stayed.table_max_hits == 2


def test_ruin_is_a_bankroll_below_one_unit_and_a_stake_it_cannot_cover_starts_over():
    system = _system("martingale_banker", session={"bankroll": "65", "max_rounds": None})
    result = play_session(system, _rounds("P" * 10))  # 10, 20, then 40 > 35 left: 10, 20, and 5 is left
    assert (result.ended, result.rounds, result.end, result.wagered) == ("ruin", 4, 5, 10 + 20 + 10 + 20)


@pytest.mark.parametrize("name, winners, stakes", [
    ("one_three_two_six_banker", "BBBBB", [10, 30, 20, 60, 10]),
    ("paroli_player", "PPPPP", [10, 20, 40, 10, 20]),
    ("dalembert_banker", "PPBB", [10, 20, 30, 20]),
    ("fibonacci_player", "BBBBP", [10, 10, 20, 30, 50]),
    ("labouchere_banker", "PBBBB", [50, 60, 60, 30, 50]),  # 1234 -> 12345 -> 234 -> 3 -> crossed out: 1234
    ("oscars_grind_player", "BBPPP", [10, 10, 10, 20, 10]),  # -1, -2, -1, +1: the series is won
])
def test_each_progression_stakes_as_documented(name, winners, stakes):
    system = _system(name, session={"max_rounds": None, "goal": "5000"})
    wagered = [play_session(system, _rounds(winners[:n])).wagered for n in range(len(winners) + 1)]
    assert [b - a for a, b in zip(wagered, wagered[1:])] == stakes


def test_follow_the_shoe_bets_the_last_non_tie_winner_and_starts_again_each_shoe():
    system = _system("follow_the_shoe", session={"max_rounds": None})
    rounds = _rounds("PTP") + _rounds("P", shoe=1)
    result = play_session(system, rounds)  # banker (lose), player (push), player (win), banker (lose)
    assert result.end == 1000 - 10 + 10 - 10
    single = _system("follow_the_shoe", session={"max_rounds": None, "span_shoes": False})
    assert play_session(single, rounds).ended == "shoe_end" and play_session(single, rounds).rounds == 3


def test_big_road_column_bets_each_column_as_long_as_the_one_before():
    system = _system("big_road_column", session={"max_rounds": None})
    result = play_session(system, _rounds("BBPPB"))
    # banker (win), banker (win), banker (lose: P starts a column), player (win), banker (win)
    assert result.end == 1000 + Decimal("9.50") * 3 - 10 + 10


def test_derived_road_marks_agree_with_the_marts_roads():
    generator = random.Random(7)
    for _ in range(20):
        winners = "".join(generator.choice("BBBPPPT") for _ in range(60))
        cells = pl.from_arrow(road_cells(Engine.duckdb, outcomes_table([winners])))
        road = _BigRoad()
        marks = {name: [] for name in DERIVED_ROADS}
        for winner in winners:
            if winner != "T":
                for name, back in DERIVED_ROADS.items():
                    mark = road.mark({"B": "banker", "P": "player"}[winner], back)
                    marks[name] += [mark] if mark else []
            road.add(winner)
        for name in DERIVED_ROADS:
            expected = cells.filter(pl.col("road") == name).sort("seq")["mark"].to_list()
            assert marks[name] == expected and road.last_marks.get(name) == (expected or [None])[-1]


@pytest.mark.parametrize("name", known_systems())
def test_every_shipped_system_plays_sessions_that_end_as_they_say(name):
    system = load_system(name)
    generator = random.Random(name)
    rounds = [Round(index // 80, winner, NETS[winner])
              for index, winner in enumerate(generator.choices("BPT", weights=(46, 45, 9), k=8_000))]
    position, endings = 0, set()
    while position < len(rounds):
        result = play_session(system, rounds[position:], rounds[:position])
        position += result.rounds
        endings.add(result.ended)
        session = system.session
        assert {"goal": result.end >= session.bankroll + session.goal, "ruin": result.end < system.unit,
                "max_rounds": result.rounds >= session.max_rounds, "incomplete": position == len(rounds)
                }[result.ended]
        assert result.max_drawdown >= max(0, session.bankroll - result.end) and result.stakes == result.rounds
        assert result.wagered >= result.stakes * system.unit
    assert "goal" in endings and ("ruin" in endings or "max_rounds" in endings)


@pytest.mark.slow
def test_sessions_played_round_by_round_agree_with_the_exact_risk_of_ruin():
    """play_session and `baccarat risk` share their definitions of goal, ruin and a lost Martingale cycle."""
    distribution = net_distribution(load_rule_set("punto_banco"), "banker")
    exact = risk(RiskQuestion("banker", "martingale", Fraction(20), Fraction(10), Fraction(8)), distribution)
    system = _system("martingale_banker", table={"maximum": "80"},
                     session={"bankroll": "200", "goal": "100", "max_rounds": None})
    generator = random.Random(21)
    weights = [float(distribution[Fraction(19, 20)]), float(distribution[Fraction(-1)]), float(distribution[0])]

    def rounds():
        while True:
            winner = generator.choices("BPT", weights=weights)[0]
            yield Round(0, winner, NETS[winner])

    sessions = 3000
    reached = sum(play_session(system, rounds()).ended == "goal" for _ in range(sessions))
    p = float(exact.goal_reached.value)
    assert abs(reached / sessions - p) < 4 * (p * (1 - p) / sessions) ** 0.5
