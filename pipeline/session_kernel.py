"""The compiled session loop: a betting system played over a run's rounds, on integers.

Exactly pipeline/play.py's play_session (the reference the tests hold it to), with money in cents and
each round's net of one unit in hundredths, so a stake of s cents settles as s * net / 100 cents: an
exact division for every stake a system can place, or the system is refused before play. The System
becomes plain integers in `_parameters`; the loop is numba. Progressions keep play_session's quirks on
purpose (a Labouchère that starts over adds its nominal stake to the line, not the unit it bet).

A progression asking more units than any table allows saturates at _HUGE: every such stake is above
the maximum, so the saturated value takes the same decisions as the exact one.
"""


import numpy as np
from numba import njit

from pipeline.play import CENTS, CHECKPOINTS, ENDINGS, WINNER_CODES, check_exact_cents
from pipeline.systems import CHOOSERS, DERIVED_ROADS, PROGRESSIONS, System

_GOAL, _RUIN, _STOP_LOSS, _MAX_ROUNDS, _SHOE_END, _INCOMPLETE = (ENDINGS.index(ending) for ending in (
    "goal", "ruin", "stop_loss", "max_rounds", "shoe_end", "incomplete"))
_HUGE = 1 << 60  # units: above any table maximum
_FIXED = -1  # the bet is one bet kind, not a chooser
_NONE = -1  # no stop-loss, no round limit, no derived-road mark yet
_BANKER, _PLAYER, TIE = range(len(WINNER_CODES))  # the winners' codes; a fixed bet on neither side is TIE too
_OPPOSITE = (_PLAYER, _BANKER)
_MARTINGALE, _PAROLI, _ONE_THREE, _DALEMBERT, _FIBONACCI, _LABOUCHERE, _OSCAR = (
    PROGRESSIONS.index(kind) for kind in ("martingale", "paroli", "one_three_two_six", "dalembert", "fibonacci",
                                          "labouchere", "oscars_grind"))
_SAME_SIDE, _FOLLOW, _OPPOSE, _COLUMN, _DERIVED = range(len(CHOOSERS))

# the system's integers (params) and the result row's columns
(P_KIND, P_STAY, P_PAROLI_WINS, P_UNIT, P_MAX, P_MAX_UNITS, P_BANKROLL, P_GOAL, P_STOP_FLOOR, P_MAX_ROUNDS,
 P_TIES_COUNT, P_SPAN_SHOES, P_CHOOSE, P_FIRST, P_BACK, P_FIXED_SIDE) = range(16)
COLUMNS = ("start", "rounds", "stakes", "table_max_hits", "start_bankroll", "end_bankroll", "wagered",
           "wagered_banker", "wagered_player", "max_drawdown",
           *(f"bankroll_after_{n}" for n in CHECKPOINTS), "complete", "ended")
_AFTER = COLUMNS.index(f"bankroll_after_{CHECKPOINTS[0]}")  # the first checkpoint's column
# the positions read by index in the progression's state (level, units, profit, the line's ends in the
# buffer), in the bankroll's (money, peak, drawdown, wagered in all, on banker, on player, stakes, table
# maximum hits), and the road's
_LEVEL, _UNITS, _, _LO, _HI = range(5)
_MONEY, _, _DRAWDOWN, _WAGERED, _WAGERED_BANKER, _WAGERED_PLAYER, _STAKES, _HITS = range(8)
_NEW_ROAD = (0, _NONE, _NONE, _NONE, _NONE)  # columns, the last column's side, each derived road's last mark
_ROWS_PER_CALL = 1 << 16


def _cents(amount) -> int:
    return int(amount * CENTS)


def _parameters(system: System) -> tuple[int, ...]:
    session, progression = system.session, system.progression
    unit, maximum = _cents(system.unit), _cents(system.table.maximum)
    bankroll = _cents(session.bankroll)
    chooser = None if isinstance(system.bet, str) else system.bet
    fixed_side = {"banker": _BANKER, "player": _PLAYER}.get(system.bet, TIE) if chooser is None else TIE
    return tuple(int(value) for value in (
        PROGRESSIONS.index(progression.kind), progression.at_max == "stay", progression.paroli_wins,
        unit, maximum, maximum // unit, bankroll, bankroll + _cents(session.goal),
        _NONE if session.stop_loss is None else bankroll - _cents(session.stop_loss),
        _NONE if session.max_rounds is None else session.max_rounds, session.ties_count, session.span_shoes,
        _FIXED if chooser is None else CHOOSERS.index(chooser.choose),
        _BANKER if chooser is None or chooser.first == "banker" else _PLAYER,
        0 if chooser is None or chooser.road is None else DERIVED_ROADS[chooser.road], fixed_side))


def _compiled_form(values: np.ndarray, dtype) -> np.ndarray:
    """Contiguous and writable (a copy only if need be), so that every caller, Arrow's read-only
    buffers included, uses the one compiled and cached version of the loop."""
    return np.require(values, dtype, ["C_CONTIGUOUS", "WRITEABLE"])


def _one_net_per_residue(nets: np.ndarray) -> list[int]:
    """One net of each remainder modulo CENTS found: whether a stake times a net is whole cents depends
    on that remainder alone (and a sort of every net is slow)."""
    examples, found = _residue_examples(nets)
    return examples[found].tolist()


@njit(cache=True)
def _residue_examples(nets):
    """In one pass: for each remainder modulo CENTS, whether a net has it, and the first that does."""
    examples = np.zeros(CENTS, dtype=np.int64)
    found = np.zeros(CENTS, dtype=np.bool_)
    for net in nets:
        residue = net % CENTS
        if not found[residue]:
            found[residue] = True
            examples[residue] = net
    return examples, found


def play_sessions(system: System, shoe_ids: np.ndarray, winners: np.ndarray, nets: dict[str, np.ndarray],
                  first: int, stop: int) -> dict[str, np.ndarray]:
    """Consecutive sessions of `system` from round `first` until the next would start at or after `stop`
    (see pipeline/play.py for one session): one entry per session in each array. The arrays begin
    with a shoe's first round: a session that starts mid-shoe chooses from the shoe's roads so far."""
    sides = system.sides
    chosen = [_compiled_form(nets[side], np.int64) for side in sides]
    check_exact_cents(system, (net for column in chosen for net in _one_net_per_residue(column)))
    first_nets, second_nets = chosen[0], chosen[-1]
    shoe_ids, winners = _compiled_form(shoe_ids, np.int64), _compiled_form(winners, np.int8)
    params, line = _parameters(system), np.array(system.progression.line, dtype=np.int64)
    checkpoints = np.array(CHECKPOINTS, dtype=np.int64)
    chunks, start = [], first
    while True:
        rows = np.empty((_ROWS_PER_CALL, len(COLUMNS)), dtype=np.int64)
        count, start = _play(params, line, checkpoints, shoe_ids, winners, first_nets, second_nets, start, stop,
                             rows)
        chunks.append(rows[:count])
        if count < _ROWS_PER_CALL:
            break
    table = np.concatenate(chunks)
    result = {name: table[:, index] for index, name in enumerate(COLUMNS)}
    result["complete"] = result["complete"].astype(bool)
    result["ended"] = result["ended"].astype(np.int8)
    return result


@njit(cache=True)
def _play(params, line, checkpoints, shoe_ids, winners, first_nets, second_nets, start, stop, rows):
    """Sessions from `start` into `rows` until it is full or the next would start at min(stop, n): how
    many, and where the next starts. `params` is a tuple, so that the loop holds it in registers. The
    road is built once, from the rounds of `start`'s shoe before it, then carried from each session to
    the next, as they are contiguous."""
    end = min(stop, len(winners))
    if start >= end:
        return 0, start
    begin = _shoe_begin(shoe_ids, start)
    # room for every number a Labouchère line can gain and every column a big road can have, in any
    # session from here: a round adds one at most (growing arrays in the loop costs more than the room)
    room = len(winners) - begin + 1
    buffer = np.empty(len(line) + room, dtype=np.int64)
    lengths = np.empty(room, dtype=np.int64)
    road = _road_between(params, winners, begin, start, lengths)
    count = 0
    while count < len(rows) and start < end:
        start, road = _session(params, line, checkpoints, shoe_ids, winners, first_nets, second_nets, start, road,
                               buffer, lengths, rows[count])
        count += 1
    return count, start


@njit(cache=True)
def _shoe_begin(shoe_ids, index):
    """The first round of round `index`'s shoe in the arrays."""
    while index > 0 and shoe_ids[index - 1] == shoe_ids[index]:
        index -= 1
    return index


@njit(cache=True)
def _road_between(params, winners, begin, start, lengths):
    """The road of rounds [begin, start), which begins a shoe: a session from `start` chooses from it."""
    road = _NEW_ROAD
    if params[P_CHOOSE] != _FIXED:
        for index in range(begin, start):
            if winners[index] != TIE:
                road = _add_to_road(road, lengths, winners[index], params[P_CHOOSE] == _DERIVED)
    return road


@njit(cache=True)
def _session(params, line, checkpoints, shoe_ids, winners, first_nets, second_nets, start, road, buffer, lengths,
             row):
    """One session from round `start`, whose shoe's rounds before it made `road`, written into `row`:
    the next start and its road. Its state is in scalars and tuples of scalars, never in arrays, so
    that the compiled loop keeps it in registers."""
    bank = (params[P_BANKROLL], params[P_BANKROLL], 0, 0, 0, 0, 0, 0)
    state = _reset(line, buffer)
    row[_AFTER:_AFTER + len(checkpoints)] = _NONE
    ended, index, counted, shoe, slot = _INCOMPLETE, start, 0, shoe_ids[start], 0
    chooses, derived = params[P_CHOOSE] != _FIXED, params[P_CHOOSE] == _DERIVED
    while index < len(winners):
        if shoe_ids[index] != shoe:
            if not params[P_SPAN_SHOES]:
                ended = _SHOE_END
                break
            shoe, road = shoe_ids[index], _NEW_ROAD
        side = _choose(params, road, lengths) if chooses else params[P_FIXED_SIDE]
        net = second_nets[index] if side == _PLAYER else first_nets[index]
        stake, state, hit = _stake(params, state, line, buffer, bank[_MONEY])
        bank = _settled(bank, stake, net, side, hit)
        if net != 0:
            state = _progress(params, state, line, buffer, net > 0, stake * net)
        winner = winners[index]
        if winner != TIE and chooses:
            road = _add_to_road(road, lengths, winner, derived)
        if winner != TIE or params[P_TIES_COUNT]:
            counted += 1
        index += 1
        if slot < len(checkpoints) and checkpoints[slot] == index - start:  # checkpoints increase
            row[_AFTER + slot] = bank[_MONEY]
            slot += 1
        ended = _ending(params, bank[_MONEY], counted)
        if ended != _INCOMPLETE:
            break
    _write_row(row, start, index - start, params, bank, ended)
    if index < len(winners) and shoe_ids[index] != shoe:  # the next session begins a shoe
        road = _NEW_ROAD
    return index, road


@njit(cache=True)
def _write_row(row, start, rounds, params, bank, ended):
    row[0], row[1], row[2], row[3] = start, rounds, bank[_STAKES], bank[_HITS]
    row[4], row[5], row[6] = params[P_BANKROLL], bank[_MONEY], bank[_WAGERED]
    row[7], row[8], row[9] = bank[_WAGERED_BANKER], bank[_WAGERED_PLAYER], bank[_DRAWDOWN]
    for slot in range(_AFTER, len(row) - 2):
        if row[slot] == _NONE:  # a checkpoint the session did not reach: its end bankroll
            row[slot] = bank[_MONEY]
    row[len(row) - 2] = ended != _INCOMPLETE
    row[len(row) - 1] = ended


@njit(cache=True, inline="always")
def _ending(params, money, counted):
    if money >= params[P_GOAL]:
        return _GOAL
    if money < params[P_UNIT]:
        return _RUIN
    if params[P_STOP_FLOOR] != _NONE and money <= params[P_STOP_FLOOR]:
        return _STOP_LOSS
    if params[P_MAX_ROUNDS] != _NONE and counted >= params[P_MAX_ROUNDS]:
        return _MAX_ROUNDS
    return _INCOMPLETE


@njit(cache=True, inline="always")
def _settled(bank, stake, net, side, hit):
    """The bankroll's tuple after a stake of `stake` cents settled at `net` hundredths of it."""
    money, peak, drawdown, wagered, wagered_banker, wagered_player, stakes, hits = bank
    money += stake * net // CENTS
    peak = max(peak, money)
    return (money, peak, max(drawdown, peak - money), wagered + stake,
            wagered_banker + stake if side == _BANKER else wagered_banker,
            wagered_player + stake if side == _PLAYER else wagered_player, stakes + 1, hits + hit)


@njit(cache=True, inline="always")
def _stake(params, state, line, buffer, money):
    """The next stake in cents, the progression's state after it, and whether it hit the table maximum."""
    units = _next_units(params[P_KIND], state, buffer)
    hit = units > params[P_MAX_UNITS]
    stake = units * params[P_UNIT] if not hit else 0
    if hit:
        if params[P_STAY]:
            stake = params[P_MAX]
        else:
            state = _reset(line, buffer)
            stake = params[P_UNIT]
    if stake > money:  # a stake the bankroll cannot cover starts the progression over
        state = _reset(line, buffer)
        stake = params[P_UNIT]
    return stake, state, hit


@njit(cache=True, inline="always")
def _reset(line, buffer):
    """A progression's first state; the Labouchère line copied to the buffer's start."""
    buffer[:len(line)] = line
    return 0, 1, 0, 0, len(line)


@njit(cache=True, inline="always")
def _next_units(kind, state, buffer):
    level = state[_LEVEL]
    if kind == _LABOUCHERE:
        low, high = state[_LO], state[_HI]
        return min(buffer[low] + buffer[high - 1], _HUGE) if high - low > 1 else buffer[low]
    if kind == _FIBONACCI:
        small, large = 1, 1
        for _ in range(level):
            small, large = large, min(small + large, _HUGE)
        return small
    if kind == _MARTINGALE or kind == _PAROLI:
        return 1 << level if level < 60 else _HUGE
    if kind == _ONE_THREE:
        return (1, 3, 2, 6)[level]
    return state[_UNITS]  # flat, dalembert, oscars_grind


@njit(cache=True, inline="always")
def _progress(params, state, line, buffer, won, settled):
    """The progression's state after a decided bet whose stake times net was `settled` (cents x
    hundredths); the line's buffer has room for one more number at its end."""
    kind = params[P_KIND]
    level, units, profit, low, high = state
    if kind == _MARTINGALE:
        return 0 if won else min(level + 1, 60), units, profit, low, high
    if kind == _PAROLI:
        return level + 1 if won and level + 1 < params[P_PAROLI_WINS] else 0, units, profit, low, high
    if kind == _ONE_THREE:
        return (level + 1) % 4 if won else 0, units, profit, low, high
    if kind == _DALEMBERT:
        return level, max(1, units - 1) if won else units + 1, profit, low, high
    if kind == _FIBONACCI:
        return max(0, level - 2) if won else level + 1, units, profit, low, high
    if kind == _LABOUCHERE:
        return _cross_out(state, buffer, line, won, _next_units(kind, state, buffer))
    if kind == _OSCAR:
        return _grind(params, state, line, buffer, won, _next_units(kind, state, buffer), settled)
    return state


@njit(cache=True, inline="always")
def _cross_out(state, buffer, line, won, staked):
    level, units, profit, low, high = state
    if won:
        if high - low <= 2:
            return _reset(line, buffer)
        return level, units, profit, low + 1, high - 1
    buffer[high] = staked
    return level, units, profit, low, high + 1


@njit(cache=True, inline="always")
def _grind(params, state, line, buffer, won, staked, settled):
    """Oscar's grind; its profit is kept in cents x hundredths, so one unit is P_UNIT * CENTS."""
    level, units, profit, low, high = state
    one_unit = params[P_UNIT] * CENTS
    profit += settled
    if profit >= one_unit:
        return _reset(line, buffer)
    if won:
        short = -((profit - one_unit) // one_unit)  # ceil(1 - profit in units)
        units = min(staked + 1, max(1, short))
    return level, units, profit, low, high


@njit(cache=True, inline="always")
def _mark(road, lengths, side, back):
    """The mark (0 red, 1 blue) a derived road comparing `back` columns would give a new `side` entry,
    or _NONE (docs/rules.md)."""
    columns = road[0]
    if columns > 0 and road[1] == side:
        column, row = columns - 1, lengths[columns - 1]
    else:
        column, row = columns, 0
    if row == 0:
        if column - 1 - back < 0:
            return _NONE
        return 0 if lengths[column - 1] == lengths[column - 1 - back] else 1
    if column - back < 0:
        return _NONE
    return 1 if lengths[column - back] == row else 0


@njit(cache=True, inline="always")
def _marked(road, lengths, side, back):
    """The derived road's last mark after a new `side` entry: the new one, or the one before."""
    mark = _mark(road, lengths, side, back)
    return road[1 + back] if mark == _NONE else mark


@njit(cache=True, inline="always")
def _add_to_road(road, lengths, side, derived):
    """The road after a Banker or Player win (each derived road's last mark only when `derived`);
    `lengths` has room for one more column."""
    columns, last, big_eye, small, cockroach = road
    if derived:
        big_eye, small, cockroach = (_marked(road, lengths, side, 1), _marked(road, lengths, side, 2),
                                     _marked(road, lengths, side, 3))
    if columns > 0 and last == side:
        lengths[columns - 1] += 1
        return columns, last, big_eye, small, cockroach
    lengths[columns] = 1
    return columns + 1, side, big_eye, small, cockroach


@njit(cache=True, inline="always")
def _choose(params, road, lengths):
    choose, columns, side = params[P_CHOOSE], road[0], road[1]
    if choose == _SAME_SIDE or columns == 0:
        return params[P_FIRST]
    if choose == _FOLLOW:
        return side
    if choose == _OPPOSE:
        return _OPPOSITE[side]
    if choose == _COLUMN:
        if columns < 2:
            return side
        return side if lengths[columns - 1] < lengths[columns - 2] else _OPPOSITE[side]
    last = road[1 + params[P_BACK]]
    if last == _NONE:
        return params[P_FIRST]
    banker = _mark(road, lengths, _BANKER, params[P_BACK]) == last
    player = _mark(road, lengths, _PLAYER, params[P_BACK]) == last
    if banker != player:
        return _BANKER if banker else _PLAYER
    return params[P_FIRST]
