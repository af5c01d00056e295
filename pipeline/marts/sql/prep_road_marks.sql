-- How often each mark appears on each road in a range (input: big_road and derived of the shoes its
-- road statistics cover): B and P on the big road, red and blue on the derived roads. A partial
-- (pipeline/marts/partials.py) that merges by summing `count`. Feeds road_colours and road_patterns.
WITH marks AS (
    SELECT road, mark FROM big_road
    UNION ALL
    SELECT road, mark FROM derived
)
SELECT road, mark, count(*) AS count
FROM marks
GROUP BY road, mark
