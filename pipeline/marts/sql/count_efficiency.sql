-- Per count system, bet, direction and true-count trigger: a player who stakes one unit on every
-- round whose true count (round_ev.true_count_<system>) is at or above the trigger (direction
-- 'high') or at or below it ('low'), as a count file's favourable_when says. Triggers step by 1/2
-- over the true counts the run reached: a round at level k = floor(2 x true count) is bet 'high'
-- at every trigger k / 2 and below, one at level ceil(2 x true count) 'low' at every trigger from
-- it up, so the figures at a trigger add up the levels from the far end (input count_levels).
-- Expected units per shoe are the sum of the exact EVs bet over the shoes of the run;
-- share_of_perfect divides them by perfect play's (input perfect_play). The correlation of the
-- true count and the exact EV is over every round, from the 'high' levels' co-moments about their
-- means, each moved to the means of every round (m2 + n (level mean - mean)^2, Chan et al.; null
-- when either does not vary).
WITH high AS (
    SELECT *, sum(sum_tc) OVER series / sum(rounds) OVER series AS mean_tc,
           sum(sum_ev) OVER series / sum(rounds) OVER series AS mean_ev
    FROM count_levels
    WHERE direction = 'high'
    WINDOW series AS (PARTITION BY count_system, bet)
),
fits AS (
    SELECT count_system, bet, sum(rounds) AS n,
           CASE WHEN min(min_tc) < max(max_tc) AND min(min_ev) < max(max_ev) THEN
               sum(m2_tc_ev + rounds * (sum_tc / rounds - mean_tc) * (sum_ev / rounds - mean_ev))
               / sqrt(sum(m2_tc + rounds * (sum_tc / rounds - mean_tc) ^ 2)
                      * sum(m2_ev + rounds * (sum_ev / rounds - mean_ev) ^ 2))
           END AS correlation
    FROM high
    GROUP BY count_system, bet
),
grid AS (
    SELECT count_system, bet, direction, unnest(range(min(level), max(level) + 1)) AS level
    FROM count_levels
    GROUP BY count_system, bet, direction
),
cumulative AS (
    SELECT g.count_system, g.bet, g.direction, g.level,
           sum(coalesce(l.rounds, 0)) OVER far_end AS rounds_bet,
           sum(coalesce(l.sum_ev, 0)) OVER far_end AS ev_sum
    FROM grid AS g
    LEFT JOIN count_levels AS l
           ON l.count_system = g.count_system AND l.bet = g.bet AND l.direction = g.direction AND l.level = g.level
    WINDOW far_end AS (PARTITION BY g.count_system, g.bet, g.direction
                       ORDER BY CASE g.direction WHEN 'high' THEN -g.level ELSE g.level END
                       ROWS UNBOUNDED PRECEDING)
)
SELECT c.count_system, c.bet, c.direction, c.level / 2 AS trigger, f.n::BIGINT AS rounds, c.rounds_bet,
       c.rounds_bet / f.n AS share_bet,
       c.ev_sum / nullif(c.rounds_bet, 0) AS mean_ev_bet,
       c.ev_sum / p.shoes AS expected_units_per_shoe,
       p.expected_units_per_shoe AS perfect_units_per_shoe,
       c.ev_sum / p.shoes / nullif(p.expected_units_per_shoe, 0) AS share_of_perfect,
       f.correlation
FROM cumulative AS c
JOIN fits AS f ON f.count_system = c.count_system AND f.bet = c.bet
JOIN perfect_play AS p ON p.bet = c.bet
ORDER BY c.count_system, c.bet, c.direction, trigger
