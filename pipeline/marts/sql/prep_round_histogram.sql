-- How many rounds had each combination of nets (a few dozen rows): every per-round
-- statistic of every bet is a weighted sum over this table.
SELECT COLUMNS('^net_'), CAST(sum(weight) AS BIGINT) AS weight
FROM round_groups
GROUP BY ALL
