-- Net per session, per bet, as a histogram (horizon, bet, net, sessions). Sessions are one
-- round, one shoe, or 100 or 1,000 consecutive rounds in run order (an incomplete last
-- session is left out).
WITH thousands AS (
    SELECT block // 10 AS block, sum(rounds) AS rounds, sum(COLUMNS('^net_'))
    FROM blocks
    GROUP BY block // 10
),
sessions AS (
    SELECT 'round' AS horizon, COLUMNS('^net_'), weight FROM round_histogram
    UNION ALL BY NAME
    SELECT 'shoe' AS horizon, COLUMNS('^net_'), 1 AS weight FROM shoe_totals
    UNION ALL BY NAME
    SELECT 'session_100' AS horizon, COLUMNS('^net_'), 1 AS weight FROM blocks WHERE rounds = 100
    UNION ALL BY NAME
    SELECT 'session_1000' AS horizon, COLUMNS('^net_'), 1 AS weight FROM thousands WHERE rounds = 1000
),
long AS (
    UNPIVOT sessions ON COLUMNS('^net_') INTO NAME column_name VALUE net
)
SELECT horizon, substr(column_name, 5) AS bet, CAST(net AS DECIMAL(18, 2)) AS net, sum(weight) AS sessions
FROM long
GROUP BY ALL
