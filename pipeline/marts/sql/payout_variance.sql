-- Per bet and horizon (one round, one shoe, sessions of 100 and 1,000 rounds): the net per
-- session: mean, sample SD (null for a single session), percentiles and the share of sessions ahead (net > 0). A
-- percentile p is the smallest net x with at least p of the sessions at or below x.
WITH cumulative AS (
    SELECT *,
           sum(sessions) OVER (PARTITION BY horizon, bet ORDER BY net) AS at_or_below,
           sum(sessions) OVER (PARTITION BY horizon, bet) AS total
    FROM session_histogram
)
SELECT bet, horizon,
       any_value(total) AS sessions,
       sum(sessions * net::DOUBLE) / any_value(total) AS mean,
       CASE WHEN any_value(total) > 1
            THEN sqrt(greatest((sum(sessions * net::DOUBLE * net::DOUBLE)
                                - sum(sessions * net::DOUBLE) ^ 2 / any_value(total)) / (any_value(total) - 1), 0))
       END AS sd,
       min(net) FILTER (WHERE at_or_below >= 0.01 * total) AS p01,
       min(net) FILTER (WHERE at_or_below >= 0.05 * total) AS p05,
       min(net) FILTER (WHERE at_or_below >= 0.50 * total) AS p50,
       min(net) FILTER (WHERE at_or_below >= 0.95 * total) AS p95,
       min(net) FILTER (WHERE at_or_below >= 0.99 * total) AS p99,
       coalesce(sum(sessions) FILTER (WHERE net > 0), 0) / any_value(total) AS share_ahead
FROM cumulative
GROUP BY bet, horizon
ORDER BY bet, list_position(['round', 'shoe', 'session_100', 'session_1000'], horizon)
