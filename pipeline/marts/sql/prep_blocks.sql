-- Net totals of consecutive blocks of 100 rounds in the run's order (shoe, round); block b
-- holds rounds 100*b .. 100*b + 99 counted from 0 across the whole run.
SELECT (o.first_round + r.round - 1) // 100 AS block, count(*) AS rounds, sum(COLUMNS('^net_'))
FROM rounds AS r
JOIN offsets AS o USING (shoe_id)
GROUP BY block
