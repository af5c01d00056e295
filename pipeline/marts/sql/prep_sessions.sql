-- Net per session of a range, per bet, as a histogram (horizon, bet, net, sessions): its shoes,
-- and its sessions of 100 and 1,000 consecutive rounds that lie wholly inside it (those across
-- its edges are prep_session_edges). A partial (pipeline/marts/partials.py) that merges by
-- summing `sessions`. Feeds prep_session_histogram.
WITH sessions AS (
    SELECT 'shoe' AS horizon, COLUMNS('^net_') FROM shoes
    UNION ALL BY NAME
    SELECT 'session_' || size AS horizon, COLUMNS('^net_') FROM blocks WHERE rounds = size
),
long AS (
    UNPIVOT sessions ON COLUMNS('^net_') INTO NAME column_name VALUE net
)
SELECT horizon, substr(column_name, 5) AS bet, CAST(net AS DECIMAL(18, 2)) AS net, count(*) AS sessions
FROM long
GROUP BY ALL
