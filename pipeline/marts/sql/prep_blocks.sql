-- Net totals of consecutive blocks of 100 and of 1,000 rounds (size) in the run's order, over a
-- range's rounds; block b of a size holds the rounds at run_row size*b .. size*b + size - 1
-- (run_row: a round's place in the run, from 0). A block with fewer rounds than its size lies
-- across the range's edge, or is the run's incomplete last session. Feeds prep_sessions,
-- prep_session_edges and prep_running_nets.
WITH hundreds AS (
    SELECT run_row // 100 AS block, count(*) AS rounds, sum(COLUMNS('^net_'))
    FROM rounds
    GROUP BY block
)
SELECT 100 AS size, * FROM hundreds
UNION ALL BY NAME
SELECT 1000 AS size, block // 10 AS block, sum(rounds)::BIGINT AS rounds, sum(COLUMNS('^net_'))
FROM hundreds
GROUP BY block // 10
