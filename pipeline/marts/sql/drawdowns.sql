-- Per system, over its complete sessions: the maximum drawdowns binned in whole units of the system's
-- stake unit (relation `system_terms`): bin k holds drawdowns of at least k and less than k + 1 units,
-- counted in cents. Bins without sessions are left out, and so is a system whose unit is not known.
WITH bins AS (
    SELECT s.system,
           CAST(s.max_drawdown * 100 AS BIGINT) // CAST(t.unit * 100 AS BIGINT) AS drawdown_units,
           count(*) AS sessions
    FROM sessions s
    JOIN system_terms t ON t.system = s.system
    WHERE s.ended <> 'incomplete' AND t.unit IS NOT NULL
    GROUP BY ALL
)
SELECT system, drawdown_units, sessions,
       sessions / sum(sessions) OVER (PARTITION BY system) AS share,
       sum(sessions) OVER (PARTITION BY system ORDER BY drawdown_units DESC)
       / sum(sessions) OVER (PARTITION BY system) AS share_at_or_above
FROM bins
ORDER BY system, drawdown_units
