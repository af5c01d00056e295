-- Per count system, bet, direction and true-count trigger: a player who stakes one unit on every
-- round whose true count (round_ev.true_count_<system>) is at or above the trigger (direction
-- 'high') or at or below it ('low'), as a count file's favourable_when says. Triggers step by 1/2
-- over the true counts the run reached: a round at level k = floor(2 x true count) is bet 'high'
-- at every trigger k / 2 and below, one at level ceil(2 x true count) 'low' at every trigger from
-- it up, so the figures at a trigger add up the levels from the far end. Expected units per shoe
-- are the sum of the exact EVs bet over the shoes of the run; share_of_perfect divides them by
-- perfect play's (input perfect_play). The correlation of the true count and the exact EV is over
-- every round (null when either does not vary).
WITH paired AS (  -- each round once per count system and bet: round_ev unpivoted twice, no join
    UNPIVOT (
        UNPIVOT (SELECT COLUMNS('^ev_'), COLUMNS('^true_count_') FROM round_ev)
        ON COLUMNS('^ev_') INTO NAME ev_column VALUE ev
    )
    ON COLUMNS('^true_count_') INTO NAME count_column VALUE true_count
),
summed AS (  -- one pass over the pairs: per level of each direction, and over every level
    SELECT substr(count_column, 12) AS count_system, substr(ev_column, 4) AS bet,
           floor(2 * true_count)::BIGINT AS high_level, ceil(2 * true_count)::BIGINT AS low_level,
           grouping(high_level) = 0 AS by_high_level, grouping(low_level) = 0 AS by_low_level,
           count(*) AS rounds, sum(ev) AS ev_sum,
           CASE WHEN min(true_count) < max(true_count) AND min(ev) < max(ev) THEN corr(true_count, ev) END
               AS correlation
    FROM paired
    GROUP BY GROUPING SETS ((count_column, ev_column, high_level), (count_column, ev_column, low_level),
                            (count_column, ev_column))
),
levels AS (
    SELECT count_system, bet, 'high' AS direction, high_level AS level, rounds, ev_sum
    FROM summed WHERE by_high_level
    UNION ALL
    SELECT count_system, bet, 'low' AS direction, low_level AS level, rounds, ev_sum
    FROM summed WHERE by_low_level
),
fits AS (
    SELECT count_system, bet, rounds, correlation FROM summed WHERE NOT by_high_level AND NOT by_low_level
),
grid AS (
    SELECT count_system, bet, direction, unnest(range(min(level), max(level) + 1)) AS level
    FROM levels
    GROUP BY count_system, bet, direction
),
cumulative AS (
    SELECT g.count_system, g.bet, g.direction, g.level,
           sum(coalesce(l.rounds, 0)) OVER far_end AS rounds_bet,
           sum(coalesce(l.ev_sum, 0)) OVER far_end AS ev_sum
    FROM grid AS g
    LEFT JOIN levels AS l
           ON l.count_system = g.count_system AND l.bet = g.bet AND l.direction = g.direction AND l.level = g.level
    WINDOW far_end AS (PARTITION BY g.count_system, g.bet, g.direction
                       ORDER BY CASE g.direction WHEN 'high' THEN -g.level ELSE g.level END
                       ROWS UNBOUNDED PRECEDING)
)
SELECT c.count_system, c.bet, c.direction, c.level / 2 AS trigger, f.rounds, c.rounds_bet,
       c.rounds_bet / f.rounds AS share_bet,
       c.ev_sum / nullif(c.rounds_bet, 0) AS mean_ev_bet,
       c.ev_sum / p.shoes AS expected_units_per_shoe,
       p.expected_units_per_shoe AS perfect_units_per_shoe,
       c.ev_sum / p.shoes / nullif(p.expected_units_per_shoe, 0) AS share_of_perfect,
       f.correlation
FROM cumulative AS c
JOIN fits AS f ON f.count_system = c.count_system AND f.bet = c.bet
JOIN perfect_play AS p ON p.bet = c.bet
ORDER BY c.count_system, c.bet, c.direction, trigger
