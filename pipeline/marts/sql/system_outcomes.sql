-- Per system and ending (the relation `endings`): the complete sessions that ended so, their share of the
-- system's complete sessions and its 95 % Wilson score interval, z = 1.96, n complete sessions, p the share:
-- (p + z^2/(2n) -+ z sqrt(p (1 - p)/n + z^2/(4n^2))) / (1 + z^2/n), whose ends at p = 0 and p = 1 are 0 and 1
-- exactly (in floating point the formula misses them by an ulp: 1.0000000000000002). Incomplete sessions are
-- counted apart.
WITH per_system AS (
    SELECT system,
           count(*) FILTER (WHERE ended <> 'incomplete') AS complete_sessions,
           count(*) FILTER (WHERE ended = 'incomplete') AS incomplete_sessions
    FROM sessions
    GROUP BY system
), per_ending AS (
    SELECT system, ended AS ending, count(*) AS sessions
    FROM sessions
    GROUP BY system, ended
), shares AS (
    SELECT s.system, e.position, e.ending, s.complete_sessions, s.incomplete_sessions,
           coalesce(n.sessions, 0) AS sessions,
           CASE WHEN s.complete_sessions > 0 THEN coalesce(n.sessions, 0) / s.complete_sessions END AS p,
           s.complete_sessions::DOUBLE AS n,
           1.96::DOUBLE AS z
    FROM per_system s
    CROSS JOIN endings e
    LEFT JOIN per_ending n ON n.system = s.system AND n.ending = e.ending
)
SELECT system, ending, complete_sessions, incomplete_sessions, sessions, p AS share,
       CASE WHEN p = 0 THEN 0.0
            ELSE (p + z * z / (2 * n) - z * sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / (1 + z * z / n)
       END AS share_low,
       CASE WHEN p = 1 THEN 1.0
            ELSE (p + z * z / (2 * n) + z * sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / (1 + z * z / n)
       END AS share_high
FROM shares
ORDER BY system, position
