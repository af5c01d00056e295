-- Net totals of consecutive blocks of 100 rounds in the run's order (shoe, round); block b
-- holds the rounds at run_row 100*b .. 100*b + 99 (run_row: a round's place in the run, from 0).
SELECT run_row // 100 AS block, count(*) AS rounds, sum(COLUMNS('^net_'))
FROM rounds
GROUP BY block
