-- How often each mark appears on each road: B and P on the big road, red and blue on the
-- derived roads.
WITH marks AS (
    SELECT road, mark FROM big_road
    UNION ALL
    SELECT road, mark FROM derived
)
SELECT road, mark, count(*) AS count, count(*) / sum(count(*)) OVER (PARTITION BY road) AS share
FROM marks
GROUP BY road, mark
ORDER BY list_position(['big_road', 'big_eye_boy', 'small_road', 'cockroach_pig'], road), mark
