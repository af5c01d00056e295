-- How often each mark appears on each road, over the shoes the roads were built for:
-- B and P on the big road, red and blue on the derived roads.
WITH marks AS (
    SELECT road, mark FROM big_road
    UNION ALL
    SELECT road, mark FROM derived
)
SELECT road, mark, (SELECT count(DISTINCT shoe_id) FROM big_road) AS shoes, count(*) AS count, count(*) / sum(count(*)) OVER (PARTITION BY road) AS share
FROM marks
GROUP BY road, mark
ORDER BY list_position(['big_road', 'big_eye_boy', 'small_road', 'cockroach_pig'], road), mark
