-- The longest streak of each side in a shoe, as a distribution over shoes (0: none).
WITH longest AS (
    SELECT shoe_id, side, max(length) AS longest FROM streak_list GROUP BY ALL
),
every_shoe AS (
    SELECT s.shoe_id, sides.side, coalesce(l.longest, 0) AS longest
    FROM shoe_totals AS s
    CROSS JOIN (VALUES ('B'), ('P'), ('T')) AS sides(side)
    LEFT JOIN longest AS l USING (shoe_id, side)
)
SELECT side, longest, count(*) AS shoes, count(*) / sum(count(*)) OVER (PARTITION BY side) AS share
FROM every_shoe
GROUP BY side, longest
ORDER BY side, longest
