"""The compiled round loop: deals a range of shoes into column arrays.

Randomness: shoe i of a run seeded S is shuffled by xoshiro256** (Blackman and
Vigna, 2018; passes BigCrush and PractRand), whose 256-bit state is filled with
four outputs of splitmix64 started at rng_seed(S, i), as xoshiro's authors
recommend. rng_seed depends on (S, i) alone, so a shoe deals the same cards
whatever partition, task attempt or machine deals it. The shuffle is
Fisher-Yates with Lemire's unbiased bounded integers (Lemire, 2019). A mixed
drawing decision (chemin de fer) takes the next output of the same shoe's stream,
after the shuffle, so it too depends on (S, i) alone; fixed cells and pure choices
take none, so a game without mixed choices draws exactly the shuffle's numbers.

The drawing rules and every bet's settlement arrive as lookup tables built from
conf/ by pipeline.rules, pipeline.games.strategies and pipeline.bets: the chance of
drawing at each cell (0 or 1 where the table or a pure choice decides), the cells
where a player chooses, and the nets; nothing about the game is written here.
"""

import numpy as np
from numba import njit

from pipeline.bets import RESULT_BASIS
from pipeline.cards import CODE_VALUES, NO_CARD
from pipeline.schemas import NO_DECISION, SHOE_TOTALS

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_MASK32 = np.uint64(0xFFFFFFFF)
_UNIT = 2.0**-53  # 53 random bits as a float in [0, 1)


@njit(inline="always")
def _mix64(z):
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@njit(inline="always")
def _rotl(x, k):
    return (x << np.uint64(k)) | (x >> np.uint64(64 - k))


@njit(cache=True)
def rng_seed(seed, shoe_id):
    """The splitmix64 start for one shoe: a bijection of shoe_id for a given run seed."""
    return _mix64(np.uint64(seed)) ^ (np.uint64(shoe_id) * _GOLDEN)


@njit(inline="always")
def _next(stream):
    """xoshiro256**: the next 64-bit output of `stream` (a tuple of its four state words), and the
    stream after it."""
    s0, s1, s2, s3 = stream
    result = _rotl(s1 * np.uint64(5), 7) * np.uint64(9)
    t = s1 << np.uint64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = _rotl(s3, 45)
    return result, (s0, s1, s2, s3)


@njit(inline="always")
def next_below(bound, stream):
    """An unbiased integer in [0, bound) for bound <= 2**32 (Lemire: multiply 32 random bits by the
    bound, reject the biased low part), and the stream after it."""
    bound = np.uint64(bound)
    while True:
        result, stream = _next(stream)
        m = (result >> np.uint64(32)) * bound
        low = m & _MASK32
        if low >= bound or low >= ((np.uint64(1) << np.uint64(32)) - bound) % bound:
            return m >> np.uint64(32), stream


@njit(cache=True)
def shuffle(cards, start):
    """Shuffle `cards` in place: Fisher-Yates driven by xoshiro256** seeded from splitmix64 `start`.
    Returns the stream where the shuffle left it: the shoe's decisions draw from it next."""
    x = np.uint64(start)
    s = np.empty(4, dtype=np.uint64)
    for k in range(4):
        x += _GOLDEN
        s[k] = _mix64(x)
    stream = (s[0], s[1], s[2], s[3])
    for i in range(len(cards) - 1, 0, -1):
        j, stream = next_below(i + 1, stream)
        cards[i], cards[j] = cards[j], cards[i]
    return stream


@njit(inline="always")
def draw_choice(chance, stream):
    """Whether a hand draws with probability `chance`, and the stream after: a chance of 0 or 1 (every
    fixed cell, every pure choice) takes no random number, so only mixed choices move the stream."""
    if chance == 0.0 or chance == 1.0:
        return chance == 1.0, stream
    result, stream = _next(stream)
    return (result >> np.uint64(11)) * _UNIT < chance, stream


@njit(cache=True)
def _new_shoe(decks):
    cards = np.empty(decks * 52, dtype=np.int8)
    for i in range(decks * 52):
        cards[i] = i % 52
    return cards


@njit(cache=True)
def shuffled_shoe(start, decks):
    """The shoe dealt from splitmix64 start `start`: decks * 52 card codes in dealing order."""
    cards = _new_shoe(decks)
    shuffle(cards, start)
    return cards


@njit(cache=True)
def deal_shoes(seed, first_shoe, shoes, decks, burn, ten_value_burns, cut_from_end, extra_round,
               player_chances, banker_chances, player_options, banker_options, net_tables, net_basis,
               round_counts):
    """Deal shoes first_shoe .. first_shoe + shoes - 1. One compiled loop, longer than the
    project's 60 lines on purpose: the shoe's state stays in locals numba keeps in registers, which
    calls per card would pass as a dozen arrays.

    player_chances[total] and banker_chances[card a, card b, column] are the chances of drawing
    (float64); player_options[total] and banker_options[total, column] mark the cells where a
    player chooses. Returns (shoe_id, round, cards, totals, outcome, flags, cards_left,
    big_road_column, streak_index, nets, decisions, shoe_info) where cards is int8[6, n] (P1 P2 P3
    B1 B2 B3, NO_CARD where not dealt), totals int8[2, n], flags bool[4, n] (naturals, pairs),
    nets int64[bets, n, 2] as little-endian 128-bit cents (the Arrow decimal layout), decisions
    int8[2, n] the Player's and the Banker's choice (DECISION_CODES, NO_DECISION where none arose),
    shoe_info int64[7, shoes]: shoe_id, rng_seed (as bits), burn card, cards burned, rounds,
    cards used, cut card round; counts int64[10, shoes], the SHOE_TOTALS of each shoe; and
    net_sums int64[bets, shoes], each shoe's net cents per bet. Adds each round to
    round_counts[result state, pair state, streak index] (int64[400, 9, decks * 13 + 1]): the
    nets of a round are its bets' net_tables entries at its two states.
    """
    size = decks * 52
    cut = size - cut_from_end
    capacity = shoes * (size // 4 + 1)
    shoe_id = np.empty(capacity, dtype=np.int64)
    round_no = np.empty(capacity, dtype=np.int16)
    cards = np.empty((6, capacity), dtype=np.int8)
    totals = np.empty((2, capacity), dtype=np.int8)
    outcome = np.empty(capacity, dtype=np.int8)
    flags = np.empty((4, capacity), dtype=np.bool_)
    cards_left = np.empty(capacity, dtype=np.int16)
    big_road_column = np.empty(capacity, dtype=np.int16)
    streak_index = np.empty(capacity, dtype=np.int16)
    decisions = np.full((2, capacity), NO_DECISION, dtype=np.int8)
    state = np.empty(capacity, dtype=np.int16)
    pair_state = np.empty(capacity, dtype=np.int8)
    shoe_info = np.empty((7, shoes), dtype=np.int64)
    counts = np.zeros((len(SHOE_TOTALS), shoes), dtype=np.int64)
    values = CODE_VALUES
    n = 0
    for k in range(shoes):
        sid = first_shoe + k
        start = rng_seed(seed, sid)
        shoe = _new_shoe(decks)
        stream = shuffle(shoe, start)
        p = 0
        burn_card = NO_CARD
        burned = 0
        if burn:
            burn_card = shoe[0]
            burned = values[burn_card] if values[burn_card] > 0 else ten_value_burns
            p = 1 + burned
        rounds = 0
        cut_round = 0
        road_column = 0
        road_row = 0
        tie_run = 0
        last_winner = -1
        tally = np.zeros(len(SHOE_TOTALS), dtype=np.int64)
        while True:
            if cut_round > 0 and (not extra_round or rounds > cut_round):
                break
            c0, c1, c2, c3 = shoe[p], shoe[p + 1], shoe[p + 2], shoe[p + 3]
            cards_left[n] = size - p
            p += 4
            pt = (values[c0] + values[c2]) % 10
            bt = (values[c1] + values[c3]) % 10
            p3 = NO_CARD
            b3 = NO_CARD
            flags[0, n] = pt >= 8
            flags[1, n] = bt >= 8
            if pt < 8 and bt < 8:
                banker_column = 10  # the banker table's column: "player stood"
                draws, stream = draw_choice(player_chances[pt], stream)
                if player_options[pt]:
                    decisions[0, n] = draws
                if draws:
                    p3 = shoe[p]
                    p += 1
                    banker_column = values[p3]
                    pt = (pt + banker_column) % 10
                draws, stream = draw_choice(banker_chances[values[c1], values[c3], banker_column], stream)
                if banker_options[bt, banker_column]:
                    decisions[1, n] = draws
                if draws:
                    b3 = shoe[p]
                    p += 1
                    bt = (bt + values[b3]) % 10
            rounds += 1
            shoe_id[n] = sid
            round_no[n] = rounds
            cards[0, n], cards[1, n], cards[2, n] = c0, c2, p3
            cards[3, n], cards[4, n], cards[5, n] = c1, c3, b3
            totals[0, n] = pt
            totals[1, n] = bt
            outcome[n] = 2 if pt == bt else (1 if pt > bt else 0)
            tally[outcome[n]] += 1  # banker_wins, player_wins, ties
            if outcome[n] == 2:  # consecutive ties make a tie streak; they do not break the big road's
                tie_run = tie_run + 1 if n > 0 and rounds > 1 and outcome[n - 1] == 2 else 0
                streak_index[n] = tie_run
            else:  # the big road: a new column whenever the winner changes
                if last_winner >= 0 and outcome[n] != last_winner:
                    road_column += 1
                    road_row = 0
                elif last_winner >= 0:
                    road_row += 1
                last_winner = outcome[n]
                streak_index[n] = road_row
            big_road_column[n] = road_column
            tally[6 + outcome[n]] = max(tally[6 + outcome[n]], streak_index[n] + 1)
            flags[2, n] = c0 // 4 == c2 // 4
            flags[3, n] = c1 // 4 == c3 // 4
            tally[3] += flags[0, n] or flags[1, n]
            tally[4] += flags[2, n]
            tally[5] += flags[3, n]
            state[n] = ((pt * 10 + bt) * 2 + (p3 >= 0)) * 2 + (b3 >= 0)
            pair_state[n] = (flags[2, n] + (c0 == c2)) * 3 + flags[3, n] + (c1 == c3)
            round_counts[state[n], pair_state[n], streak_index[n]] += 1
            n += 1
            if cut_round == 0 and p >= cut:
                cut_round = rounds
        shoe_info[0, k] = sid
        shoe_info[1, k] = np.int64(start)
        shoe_info[2, k] = burn_card
        shoe_info[3, k] = burned
        shoe_info[4, k] = rounds
        shoe_info[5, k] = p
        shoe_info[6, k] = cut_round
        tally[9] = road_column + 1 if last_winner >= 0 else 0
        counts[:, k] = tally
    nets = np.empty((net_tables.shape[0], n, 2), dtype=np.int64)
    net_sums = np.zeros((net_tables.shape[0], shoes), dtype=np.int64)
    for b in range(net_tables.shape[0]):
        for i in range(n):
            cents = net_tables[b, state[i] if net_basis[b] == RESULT_BASIS else pair_state[i]]
            nets[b, i, 0] = cents
            nets[b, i, 1] = cents >> 63
            net_sums[b, shoe_id[i] - first_shoe] += cents
    return (shoe_id[:n], round_no[:n], cards[:, :n], totals[:, :n], outcome[:n], flags[:, :n],
            cards_left[:n], big_road_column[:n], streak_index[:n], nets, decisions[:, :n], shoe_info, counts,
            net_sums)

