"""`baccarat risk`: the certified values against closed forms, an independent exact recursion on small
bankrolls, Martingale cycles against enumeration, Wald's identity, and bad input."""

import json
from fractions import Fraction
from itertools import product

import pytest

from pipeline.cli import main
from pipeline.risk import RiskQuestion, cycle, net_distribution, risk
from pipeline.rule_sets import load_rule_set


@pytest.fixture(scope="module")
def punto_banco():
    rule_set = load_rule_set("punto_banco")
    return {bet: net_distribution(rule_set, bet) for bet in ("player", "banker", "tie")}


def _decided(distribution):
    """Win and loss probabilities of one decided round of an even-money bet."""
    decided = 1 - distribution.get(Fraction(0), 0)
    return distribution[Fraction(1)] / decided, distribution[Fraction(-1)] / decided, decided


@pytest.mark.parametrize("bankroll, goal", [(1, 1), (10, 10), (37, 5), (1000, 1000)])
def test_flat_player_agrees_with_the_gamblers_ruin_closed_form(punto_banco, bankroll, goal):
    p, q, decided = _decided(punto_banco["player"])
    ratio, top = q / p, bankroll + goal
    reached = (1 - ratio**bankroll) / (1 - ratio**top)
    decided_rounds = bankroll / (q - p) - top / (q - p) * reached
    answer = risk(RiskQuestion("player", "flat", Fraction(bankroll), Fraction(goal)), punto_banco["player"])
    assert answer.goal_reached.contains(reached)
    assert answer.rounds.contains(decided_rounds / decided)
    assert answer.goal_reached.error < Fraction(1, 10**20) and answer.rounds.error < Fraction(1, 10**18)


def _exact_absorption(start, moves, finished, value_at_end, reward):
    """Exact expected value_at_end + rewards collected, by Gaussian elimination over the states reachable
    from `start` (moves(state) -> [(probability, next state)]); independent of pipeline/lattice.py."""
    states, queue = {start: 0}, [start]
    for state in queue:
        for _, nxt in moves(state):
            if not finished(nxt) and nxt not in states:
                states[nxt] = len(states)
                queue.append(nxt)
    rows = []
    for state in queue:  # value(state) - sum p value(next) = reward + sum p value_at_end(next finished)
        row, constant = {states[state]: Fraction(1)}, reward(state)
        for p, nxt in moves(state):
            if finished(nxt):
                constant += p * value_at_end(nxt)
            else:
                row[states[nxt]] = row.get(states[nxt], 0) - p
        rows.append([row, constant])
    for pivot, (pivot_row, pivot_constant) in enumerate(rows):
        for other in rows[pivot + 1:]:
            factor = other[0].pop(pivot, 0) / pivot_row[pivot]
            if factor:
                for column, v in pivot_row.items():
                    if column != pivot:
                        other[0][column] = other[0].get(column, 0) - factor * v
                other[1] -= factor * pivot_constant
    values = [Fraction(0)] * len(rows)
    for index in reversed(range(len(rows))):
        row, constant = rows[index]
        values[index] = (constant - sum(v * values[c] for c, v in row.items() if c != index)) / row[index]
    return values[0]


def _round_by_round(distribution, bankroll, goal, table_max):
    """Martingale (flat when table_max is 1) played round by round: state (bankroll, stake), pushes included."""
    top = bankroll + goal

    def moves(state):
        money, stake = state
        result = []
        for net, p in distribution.items():
            after = money + net * stake
            if net < 0:
                doubled = 2 * stake
                result.append((p, (after, doubled if doubled <= table_max and doubled <= after else 1)))
            else:
                result.append((p, (after, stake if net == 0 else 1)))
        return result

    def finished(state):
        return state[0] >= top or state[0] < 1

    start = (Fraction(bankroll), 1)
    results = {}
    results["goal"] = _exact_absorption(start, moves, finished, lambda s: Fraction(s[0] >= top), lambda s: 0)
    results["rounds"] = _exact_absorption(start, moves, finished, lambda s: 0, lambda s: Fraction(1))
    results["wagered"] = _exact_absorption(start, moves, finished, lambda s: 0, lambda s: Fraction(s[1]))
    results["net"] = _exact_absorption(start, moves, finished, lambda s: s[0] - bankroll, lambda s: 0)
    return results


@pytest.mark.parametrize("bet, system, bankroll, goal, table_max", [
    ("banker", "flat", 2, 1, None),
    ("tie", "flat", 3, 4, None),
    ("player", "martingale", 7, 5, 4),
    ("banker", "martingale", 3, 1, 2),
    ("player", "martingale", 12, 3, None),
])
def test_small_bankrolls_agree_with_an_exact_round_by_round_recursion(punto_banco, bet, system, bankroll, goal,
                                                                      table_max):
    limit = 1 if system == "flat" else table_max or 10**6
    brute = _round_by_round(punto_banco[bet], Fraction(bankroll), Fraction(goal), limit)
    question = RiskQuestion(bet, system, Fraction(bankroll), Fraction(goal),
                            None if table_max is None else Fraction(table_max))
    answer = risk(question, punto_banco[bet])
    assert answer.goal_reached.contains(brute["goal"])
    assert answer.rounds.contains(brute["rounds"])
    assert answer.wagered.contains(brute["wagered"])
    assert answer.expected_net.contains(brute["net"])  # Wald: net = edge x wagered, overshoot included
    assert answer.goal_reached.error < Fraction(1, 10**20)


def test_martingale_cycles_agree_with_enumerating_every_sequence_of_decided_rounds(punto_banco):
    distribution = punto_banco["banker"]
    decided = 1 - distribution[Fraction(0)]
    win, loss = distribution[Fraction(19, 20)] / decided, distribution[Fraction(-1)] / decided
    for levels in range(1, 7):
        losing, expected = Fraction(0), Fraction(0)
        for rounds in product("WL", repeat=levels):  # the rounds after a cycle's win do not change its result
            p, net, won = Fraction(1), Fraction(0), False
            for level, outcome in enumerate(rounds):
                p *= win if outcome == "W" else loss
                if not won:
                    net += Fraction(19, 20) * 2**level if outcome == "W" else -(2**level)
                    won = outcome == "W"
            losing += 0 if won else p
            expected += p * net
        found = cycle(distribution, levels)
        assert found.losing == losing == loss**levels
        assert found.expected == expected


def test_a_banker_martingale_win_after_five_losses_no_longer_covers_them(punto_banco):
    changes = cycle(punto_banco["banker"], 6).changes
    assert Fraction(19, 20) * 16 - 15 in changes and Fraction(19, 20) * 16 - 15 > 0
    assert Fraction(19, 20) * 32 - 31 == Fraction(-3, 5) and Fraction(-3, 5) in changes


def test_json_carries_every_value_with_its_bound(capsys):
    status = main(["risk", "--bet", "player", "--system", "martingale", "--bankroll", "100", "--goal", "100",
                   "--table-max", "32", "--json"])
    document = json.loads(capsys.readouterr().out)
    assert status == 0
    assert (document["bankroll"], document["goal"], document["table_max"]) == ("100", "100", "32")
    reached, ruined = (Fraction(document[key]["value"]) for key in ("goal_reached", "ruined"))
    assert reached + ruined == 1 and 0 < reached < 1
    assert float(document["goal_reached"]["error_bound"]) < 1e-20
    assert Fraction(document["cycle"]["losing_probability"]) > 0


@pytest.mark.parametrize("arguments, message", [
    (["--bet", "banker", "--bankroll", "10", "--goal", "0"], "--goal must be a positive number"),
    (["--bet", "banker", "--bankroll", "0.5", "--goal", "10"], "cannot cover one stake"),
    (["--bet", "insurance", "--bankroll", "10", "--goal", "10"], "has no 'insurance' bet"),
    (["--bet", "banker", "--bankroll", "10", "--goal", "10", "--system", "paroli"], "unknown system 'paroli'"),
    (["--bet", "banker", "--bankroll", "ten", "--goal", "10"], "--bankroll must be a number of units"),
    (["--bet", "banker", "--bankroll", "10", "--goal", "10", "--system", "martingale", "--table-max", "0.5"],
     "the table maximum 0.5 is below the unit"),
    (["--bet", "banker", "--bankroll", "10", "--goal", "10", "--table-max", "8"], "--table-max is for"),
    (["--bet", "banker", "--bankroll", "10", "--goal", "10", "--rules", "chemin_de_fer"], "leaves drawing"),
    (["--bet", "player", "--bankroll", "1e400", "--goal", "1"], "bankroll plus goal is at most 10,000 units"),
    (["--bet", "player", "--bankroll", "-1e400", "--goal", "1"], "--bankroll must be a positive number"),
    (["--bet", "player", "--bankroll", "10", "--goal", "1e-400"], "--goal must be a positive number"),
    # a huge exponent hung the command for minutes (Fraction(Decimal('1e99999999')) is a 330-million-bit integer)
    (["--bet", "player", "--bankroll", "10", "--goal", "1e99999999"], "--goal must be a number of units between"),
    (["--bet", "player", "--bankroll", "1e-99999999", "--goal", "1"], "--bankroll must be a number of units between"),
    (["--bet", "player", "--bankroll", "10", "--goal", "10", "--system", "martingale", "--table-max", "1e99999999"],
     "--table-max must be a number of units between"),
    (["--bet", "banker", "--bankroll", "1000", "--goal", "1000", "--system", "martingale"],
     "a chain of 39,980 states, too many to solve in a few seconds"),
    # solved, after 24 s of CPU (65 s on a loaded machine) with nothing printed: Tie pays 8 to 1, so its
    # cycles jump far up as well as down, and the LU's work passed what its fill told
    (["--bet", "tie", "--bankroll", "5000", "--goal", "5000", "--system", "martingale"],
     "a chain of 9,999 states, too many to solve in a few seconds"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, arguments, message):
    status = main(["risk", *arguments])
    captured = capsys.readouterr()
    assert status == 2 and captured.out == ""
    assert message in captured.err and captured.err.count("\n") == 1


@pytest.mark.parametrize("bet", ["banker", "player"])
def test_short_jump_chains_solved_in_blocks_agree_with_the_sparse_lu(punto_banco, bet, monkeypatch):
    question = RiskQuestion(bet, "flat", Fraction(60), Fraction(40))
    distribution = punto_banco[bet]
    in_blocks = risk(question, distribution)
    monkeypatch.setattr("pipeline.lattice.SHORT_JUMPS", 0)  # every chain to scipy's sparse LU
    sparse = risk(question, distribution)
    for blocks, lu in ((in_blocks.goal_reached, sparse.goal_reached), (in_blocks.rounds, sparse.rounds)):
        assert blocks.error < Fraction(1, 10**20) and lu.error < Fraction(1, 10**20)
        assert abs(blocks.value - lu.value) <= blocks.error + lu.error
