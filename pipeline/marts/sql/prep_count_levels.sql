-- Per count system, bet, direction and level of the true count (round_ev.true_count_<system>): the
-- rounds and the sums a trigger and the correlation need. A round is at level floor(2 x true count)
-- for direction 'high' and ceil(2 x true count) for 'low'. The sums of the true count (tc) and the
-- exact EV (ev), their co-moments about the level's means (m2_*: n x the population (co)variance),
-- and their least and greatest values, make the correlation over every round. A partial over a
-- range of shoes (pipeline/marts/partials.py): it merges by summing rounds and sum_*, adding the
-- spread of the parts' means to m2_* (Chan et al.), and taking the least min_* and the greatest max_*.
-- Feeds count_efficiency.
WITH paired AS (  -- each round once per count system and bet: round_ev unpivoted twice, no join
    UNPIVOT (
        UNPIVOT (SELECT COLUMNS('^ev_'), COLUMNS('^true_count_') FROM round_ev)
        ON COLUMNS('^ev_') INTO NAME ev_column VALUE ev
    )
    ON COLUMNS('^true_count_') INTO NAME count_column VALUE true_count
),
summed AS (
    SELECT substr(count_column, 12) AS count_system, substr(ev_column, 4) AS bet,
           floor(2 * true_count)::BIGINT AS high_level, ceil(2 * true_count)::BIGINT AS low_level,
           grouping(high_level) = 0 AS by_high_level,
           count(*) AS rounds, sum(ev) AS sum_ev, sum(true_count) AS sum_tc,
           var_pop(ev) * count(*) AS m2_ev, var_pop(true_count) * count(*) AS m2_tc,
           covar_pop(true_count, ev) * count(*) AS m2_tc_ev,
           min(ev) AS min_ev, max(ev) AS max_ev, min(true_count) AS min_tc, max(true_count) AS max_tc
    FROM paired
    GROUP BY GROUPING SETS ((count_column, ev_column, high_level), (count_column, ev_column, low_level))
)
SELECT count_system, bet, CASE WHEN by_high_level THEN 'high' ELSE 'low' END AS direction,
       CASE WHEN by_high_level THEN high_level ELSE low_level END AS level,
       rounds, sum_ev, sum_tc, m2_ev, m2_tc, m2_tc_ev, min_ev, max_ev, min_tc, max_tc
FROM summed
