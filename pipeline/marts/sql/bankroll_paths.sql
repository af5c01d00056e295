-- Per system and checkpoint (the sessions contract's bankroll_after_<n> columns), over its complete
-- sessions: the mean bankroll and its percentiles. A percentile p is the smallest bankroll x with at
-- least p of the sessions at or below x: the one at rank ceil(p n) in order (compared in integers).
WITH paths AS (
    UNPIVOT (SELECT system, COLUMNS('^bankroll_after_') FROM sessions WHERE ended <> 'incomplete')
    ON COLUMNS('^bankroll_after_') INTO NAME column_name VALUE bankroll
), ranked AS (
    SELECT system, CAST(substr(column_name, length('bankroll_after_') + 1) AS BIGINT) AS after_rounds, bankroll,
           row_number() OVER (PARTITION BY system, column_name ORDER BY bankroll) AS rank,
           count(*) OVER (PARTITION BY system, column_name) AS total
    FROM paths
)
SELECT system, after_rounds, any_value(total) AS sessions,
       sum(bankroll)::DOUBLE / any_value(total) AS mean,
       min(bankroll) FILTER (WHERE 100 * rank >= 5 * total) AS p05,
       min(bankroll) FILTER (WHERE 100 * rank >= 25 * total) AS p25,
       min(bankroll) FILTER (WHERE 100 * rank >= 50 * total) AS p50,
       min(bankroll) FILTER (WHERE 100 * rank >= 75 * total) AS p75,
       min(bankroll) FILTER (WHERE 100 * rank >= 95 * total) AS p95
FROM ranked
GROUP BY system, after_rounds
ORDER BY system, after_rounds
