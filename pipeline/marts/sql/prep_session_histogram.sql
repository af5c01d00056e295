-- Net per session, per bet, as a histogram (horizon, bet, net, sessions). Sessions are one
-- round, one shoe, or 100 or 1,000 consecutive rounds in run order: the ranges' merged
-- histogram (prep_sessions) and the blocks across their edges that the merge completed
-- (prep_session_edges; an incomplete last session is left out).
WITH completed AS (
    SELECT 'round' AS horizon, COLUMNS('^net_'), weight FROM round_histogram
    UNION ALL BY NAME
    SELECT 'session_' || size AS horizon, COLUMNS('^net_'), 1 AS weight FROM session_edges WHERE rounds = size
),
long AS (
    UNPIVOT completed ON COLUMNS('^net_') INTO NAME column_name VALUE net
),
histogram AS (
    SELECT horizon, substr(column_name, 5) AS bet, CAST(net AS DECIMAL(18, 2)) AS net, weight FROM long
    UNION ALL
    SELECT horizon, bet, net, sessions FROM sessions
)
SELECT horizon, bet, net, sum(weight) AS sessions
FROM histogram
GROUP BY ALL
