-- Per system and checkpoint (the sessions contract's bankroll_after_<n> columns), over its complete
-- sessions: the mean bankroll and its percentiles. A percentile p is the smallest bankroll x with at
-- least p of the sessions at or below x (compared in integers: 100 at_or_below >= p total). The sessions
-- are first counted per distinct bankroll, so the windows run over a histogram.
WITH paths AS (
    UNPIVOT (SELECT system, COLUMNS('^bankroll_after_') FROM sessions WHERE ended <> 'incomplete')
    ON COLUMNS('^bankroll_after_') INTO NAME column_name VALUE bankroll
), histogram AS (
    SELECT system, CAST(substr(column_name, length('bankroll_after_') + 1) AS BIGINT) AS after_rounds, bankroll,
           count(*) AS sessions
    FROM paths
    GROUP BY ALL
), cumulative AS (
    SELECT *,
           sum(sessions) OVER (PARTITION BY system, after_rounds ORDER BY bankroll) AS at_or_below,
           sum(sessions) OVER (PARTITION BY system, after_rounds) AS total
    FROM histogram
)
SELECT system, after_rounds, any_value(total) AS sessions,
       sum(sessions * bankroll)::DOUBLE / any_value(total) AS mean,
       min(bankroll) FILTER (WHERE 100 * at_or_below >= 5 * total) AS p05,
       min(bankroll) FILTER (WHERE 100 * at_or_below >= 25 * total) AS p25,
       min(bankroll) FILTER (WHERE 100 * at_or_below >= 50 * total) AS p50,
       min(bankroll) FILTER (WHERE 100 * at_or_below >= 75 * total) AS p75,
       min(bankroll) FILTER (WHERE 100 * at_or_below >= 95 * total) AS p95
FROM cumulative
GROUP BY system, after_rounds
ORDER BY system, after_rounds
