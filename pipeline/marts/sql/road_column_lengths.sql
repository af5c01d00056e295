-- The distribution of logical column lengths (tails included) on each road, over the shoes
-- the roads were built for.
WITH columns AS (
    SELECT road, shoe_id, col, count(*) AS length FROM big_road GROUP BY ALL
    UNION ALL
    SELECT road, shoe_id, col, count(*) AS length FROM derived GROUP BY ALL
)
SELECT road, length, (SELECT count(DISTINCT shoe_id) FROM big_road) AS shoes, count(*) AS columns, count(*) / sum(count(*)) OVER (PARTITION BY road) AS share
FROM columns
GROUP BY road, length
ORDER BY list_position(['big_road', 'big_eye_boy', 'small_road', 'cockroach_pig'], road), length
