-- How many logical columns of each length (tails included) each road has in a range (input:
-- big_road and derived of the shoes its road statistics cover). A partial
-- (pipeline/marts/partials.py) that merges by summing `columns`. Feeds road_column_lengths.
WITH columns AS (
    SELECT road, shoe_id, col, count(*) AS length FROM big_road GROUP BY ALL
    UNION ALL
    SELECT road, shoe_id, col, count(*) AS length FROM derived GROUP BY ALL
)
SELECT road, length, count(*) AS columns
FROM columns
GROUP BY road, length
