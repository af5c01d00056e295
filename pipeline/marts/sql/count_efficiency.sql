-- Per count system, bet and true-count trigger: a player who stakes one unit on every round whose
-- true count (round_ev.true_count_<system>) is at or above the trigger. Triggers step by 1/2 over
-- the true counts the run reached: level k = floor(2 x true count) bets at every trigger k / 2 and
-- below, so the figures at a trigger add up the levels from the top down. Expected units per
-- shoe are the sum of the exact EVs bet over the shoes of the run; share_of_perfect divides them by
-- perfect play's (input perfect_play). The correlation of the true count and the exact EV is over
-- every round (null when either does not vary).
WITH counts AS (
    UNPIVOT (SELECT shoe_id, round, COLUMNS('^true_count_') FROM round_ev)
    ON COLUMNS('^true_count_') INTO NAME column_name VALUE true_count
),
paired AS (
    SELECT substr(c.column_name, 12) AS count_system, e.bet, c.true_count,
           floor(2 * c.true_count)::BIGINT AS level, e.ev
    FROM counts AS c
    JOIN round_evs AS e ON e.shoe_id = c.shoe_id AND e.round = c.round
),
levels AS (
    SELECT count_system, bet, level, count(*) AS rounds, sum(ev) AS ev_sum
    FROM paired
    GROUP BY count_system, bet, level
),
fits AS (
    SELECT count_system, bet, count(*) AS rounds,
           CASE WHEN min(true_count) < max(true_count) AND min(ev) < max(ev) THEN corr(true_count, ev) END
               AS correlation
    FROM paired
    GROUP BY count_system, bet
),
grid AS (
    SELECT count_system, bet, unnest(range(min(level), max(level) + 1)) AS level
    FROM levels
    GROUP BY count_system, bet
),
cumulative AS (
    SELECT g.count_system, g.bet, g.level,
           sum(coalesce(l.rounds, 0)) OVER above AS rounds_bet,
           sum(coalesce(l.ev_sum, 0)) OVER above AS ev_sum
    FROM grid AS g
    LEFT JOIN levels AS l ON l.count_system = g.count_system AND l.bet = g.bet AND l.level = g.level
    WINDOW above AS (PARTITION BY g.count_system, g.bet ORDER BY g.level DESC ROWS UNBOUNDED PRECEDING)
)
SELECT c.count_system, c.bet, c.level / 2 AS trigger, f.rounds, c.rounds_bet,
       c.rounds_bet / f.rounds AS share_bet,
       c.ev_sum / nullif(c.rounds_bet, 0) AS mean_ev_bet,
       c.ev_sum / p.shoes AS expected_units_per_shoe,
       p.expected_units_per_shoe AS perfect_units_per_shoe,
       c.ev_sum / p.shoes / nullif(p.expected_units_per_shoe, 0) AS share_of_perfect,
       f.correlation
FROM cumulative AS c
JOIN fits AS f ON f.count_system = c.count_system AND f.bet = c.bet
JOIN perfect_play AS p ON p.bet = c.bet
ORDER BY c.count_system, c.bet, trigger
