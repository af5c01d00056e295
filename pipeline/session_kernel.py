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

from pipeline.play import CENTS, CHECKPOINTS, ENDINGS, check_exact_cents
from pipeline.systems import CHOOSERS, DERIVED_ROADS, PROGRESSIONS, System

_GOAL, _RUIN, _STOP_LOSS, _MAX_ROUNDS, _SHOE_END, _INCOMPLETE = (ENDINGS.index(ending) for ending in (
    "goal", "ruin", "stop_loss", "max_rounds", "shoe_end", "incomplete"))
_HUGE = 1 << 60  # units: above any table maximum
_FIXED = -1  # the bet is one bet kind, not a chooser
_NONE = -1  # no stop-loss, no round limit, no derived-road mark yet
_BANKER, _PLAYER, _NEITHER = 0, 1, 2  # winners' codes too (docs/rules.md): 0 Banker, 1 Player, 2 tie
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
# the progression's state (level, units, profit, the line's ends) and the bankroll's
_LEVEL, _UNITS, _PROFIT, _LO, _HI = range(5)
_MONEY, _PEAK, _DRAWDOWN, _WAGERED, _WAGERED_BANKER, _WAGERED_PLAYER, _STAKES, _HITS = range(8)
_ROWS_PER_CALL = 1 << 16


def _cents(amount) -> int:
    return int(amount * CENTS)


def _parameters(system: System) -> np.ndarray:
    session, progression = system.session, system.progression
    unit, maximum = _cents(system.unit), _cents(system.table.maximum)
    bankroll = _cents(session.bankroll)
    chooser = None if isinstance(system.bet, str) else system.bet
    fixed_side = {"banker": _BANKER, "player": _PLAYER}.get(system.bet, _NEITHER) if chooser is None else _NEITHER
    return np.array([
        PROGRESSIONS.index(progression.kind), progression.at_max == "stay", progression.paroli_wins,
        unit, maximum, maximum // unit, bankroll, bankroll + _cents(session.goal),
        _NONE if session.stop_loss is None else bankroll - _cents(session.stop_loss),
        _NONE if session.max_rounds is None else session.max_rounds, session.ties_count, session.span_shoes,
        _FIXED if chooser is None else CHOOSERS.index(chooser.choose),
        _BANKER if chooser is None or chooser.first == "banker" else _PLAYER,
        0 if chooser is None or chooser.road is None else DERIVED_ROADS[chooser.road], fixed_side,
    ], dtype=np.int64)


def _compiled_form(values: np.ndarray, dtype) -> np.ndarray:
    """Contiguous and writable (a copy only if need be), so that every caller, Arrow's read-only
    buffers included, uses the one compiled and cached version of the loop."""
    return np.require(values, dtype, ["C_CONTIGUOUS", "WRITEABLE"])


def _one_net_per_residue(nets: np.ndarray) -> list[int]:
    """One net of each remainder modulo CENTS found: whether a stake times a net is whole cents depends
    on that remainder alone (and a sort of every net is slow)."""
    residues = nets % CENTS
    return [int(nets[np.argmax(residues == residue)]) for residue in np.flatnonzero(np.bincount(residues))]


def play_sessions(system: System, shoe_ids: np.ndarray, winners: np.ndarray, nets: dict[str, np.ndarray],
                  first: int, stop: int) -> dict[str, np.ndarray]:
    """Consecutive sessions of `system` from round `first` until the next would start at or after `stop`
    (see pipeline/play.py for one session): one entry per session in each array."""
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
    many, and where the next starts."""
    end = min(stop, len(winners))
    progression = np.zeros(5, dtype=np.int64)
    # room for every number a Labouchère line can gain and every column a big road can have, in any
    # session from here: a round adds one at most (growing arrays in the loop costs more than the room)
    room = len(winners) - start + 1
    buffer = np.empty(len(line) + room, dtype=np.int64)
    lengths = np.empty(room, dtype=np.int64)
    count = 0
    while count < len(rows) and start < end:
        start = _session(params, line, checkpoints, shoe_ids, winners, first_nets, second_nets, start,
                         progression, buffer, lengths, rows[count])
        count += 1
    return count, start


@njit(cache=True)
def _session(params, line, checkpoints, shoe_ids, winners, first_nets, second_nets, start, progression, buffer,
             lengths, row):
    """One session from round `start`, written into `row`: the next start."""
    bank = np.zeros(8, dtype=np.int64)
    bank[_MONEY] = bank[_PEAK] = params[P_BANKROLL]
    road = np.full(5, _NONE, dtype=np.int64)  # columns, last column's side, each derived road's last mark
    road[0] = 0
    _reset(progression, line, buffer)
    row[_AFTER:_AFTER + len(checkpoints)] = _NONE
    ended, index, counted, shoe, slot = _INCOMPLETE, start, 0, shoe_ids[start], 0
    while index < len(winners):
        if shoe_ids[index] != shoe:
            if not params[P_SPAN_SHOES]:
                ended = _SHOE_END
                break
            road[:] = _NONE
            road[0] = 0
        shoe = shoe_ids[index]
        side = params[P_FIXED_SIDE] if params[P_CHOOSE] == _FIXED else _choose(params, road, lengths)
        net = second_nets[index] if side == _PLAYER else first_nets[index]
        stake = _stake(params, progression, line, buffer, bank)
        _settle_bank(bank, stake, net, side)
        if net != 0:
            _progress(params, progression, line, buffer, net > 0, stake * net)
        if winners[index] != _NEITHER and params[P_CHOOSE] != _FIXED:
            _add_to_road(road, lengths, winners[index], params[P_CHOOSE] == _DERIVED)
        if winners[index] != _NEITHER or params[P_TIES_COUNT]:
            counted += 1
        index += 1
        if slot < len(checkpoints) and checkpoints[slot] == index - start:  # checkpoints increase
            row[_AFTER + slot] = bank[_MONEY]
            slot += 1
        ended = _ending(params, bank[_MONEY], counted)
        if ended != _INCOMPLETE:
            break
    _write_row(row, start, index - start, params, bank, ended)
    return index


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


@njit(cache=True)
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


@njit(cache=True)
def _settle_bank(bank, stake, net, side):
    bank[_MONEY] += stake * net // CENTS
    bank[_WAGERED] += stake
    if side == _BANKER:
        bank[_WAGERED_BANKER] += stake
    elif side == _PLAYER:
        bank[_WAGERED_PLAYER] += stake
    bank[_STAKES] += 1
    bank[_PEAK] = max(bank[_PEAK], bank[_MONEY])
    bank[_DRAWDOWN] = max(bank[_DRAWDOWN], bank[_PEAK] - bank[_MONEY])


@njit(cache=True)
def _stake(params, progression, line, buffer, bank):
    """The next stake in cents; a progression past the table maximum is counted in bank[_HITS]."""
    units = _next_units(params[P_KIND], progression, buffer)
    stake = units * params[P_UNIT] if units <= params[P_MAX_UNITS] else 0
    if units > params[P_MAX_UNITS]:
        bank[_HITS] += 1
        if params[P_STAY]:
            stake = params[P_MAX]
        else:
            _reset(progression, line, buffer)
            stake = params[P_UNIT]
    if stake > bank[_MONEY]:  # a stake the bankroll cannot cover starts the progression over
        _reset(progression, line, buffer)
        stake = params[P_UNIT]
    return stake


@njit(cache=True)
def _reset(progression, line, buffer):
    progression[_LEVEL], progression[_UNITS], progression[_PROFIT] = 0, 1, 0
    buffer[:len(line)] = line
    progression[_LO], progression[_HI] = 0, len(line)


@njit(cache=True)
def _next_units(kind, progression, buffer):
    level = progression[_LEVEL]
    if kind == _LABOUCHERE:
        low, high = progression[_LO], progression[_HI]
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
    return progression[_UNITS]  # flat, dalembert, oscars_grind


@njit(cache=True)
def _progress(params, progression, line, buffer, won, settled):
    """Move the progression after a decided bet whose stake times net was `settled` (cents x hundredths);
    the line's buffer has room for one more number at its end."""
    kind, level = params[P_KIND], progression[_LEVEL]
    staked = _next_units(kind, progression, buffer)
    if kind == _MARTINGALE:
        progression[_LEVEL] = 0 if won else min(level + 1, 60)
    elif kind == _PAROLI:
        progression[_LEVEL] = level + 1 if won and level + 1 < params[P_PAROLI_WINS] else 0
    elif kind == _ONE_THREE:
        progression[_LEVEL] = (level + 1) % 4 if won else 0
    elif kind == _DALEMBERT:
        progression[_UNITS] = max(1, progression[_UNITS] - 1) if won else progression[_UNITS] + 1
    elif kind == _FIBONACCI:
        progression[_LEVEL] = max(0, level - 2) if won else level + 1
    elif kind == _LABOUCHERE:
        _cross_out(progression, buffer, line, won, staked)
    elif kind == _OSCAR:
        _grind(params, progression, line, buffer, won, staked, settled)


@njit(cache=True)
def _cross_out(progression, buffer, line, won, staked):
    low, high = progression[_LO], progression[_HI]
    if won:
        if high - low <= 2:
            _reset(progression, line, buffer)
        else:
            progression[_LO], progression[_HI] = low + 1, high - 1
        return
    buffer[high] = staked
    progression[_HI] = high + 1


@njit(cache=True)
def _grind(params, progression, line, buffer, won, staked, settled):
    """Oscar's grind; its profit is kept in cents x hundredths, so one unit is P_UNIT * CENTS."""
    one_unit = params[P_UNIT] * CENTS
    progression[_PROFIT] += settled
    if progression[_PROFIT] >= one_unit:
        _reset(progression, line, buffer)
    elif won:
        short = -((progression[_PROFIT] - one_unit) // one_unit)  # ceil(1 - profit in units)
        progression[_UNITS] = min(staked + 1, max(1, short))


@njit(cache=True)
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


@njit(cache=True)
def _add_to_road(road, lengths, side, derived):
    """A Banker or Player win on the big road and, when `derived`, each derived road's last mark; `lengths`
    has room for one more column."""
    for back in range(1, 4 if derived else 1):
        mark = _mark(road, lengths, side, back)
        if mark != _NONE:
            road[1 + back] = mark
    columns = road[0]
    if columns > 0 and road[1] == side:
        lengths[columns - 1] += 1
        return
    lengths[columns] = 1
    road[0], road[1] = columns + 1, side


@njit(cache=True)
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
