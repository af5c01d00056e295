-- How many logical columns of each length (tails included) each road has in a range (input: big_road
-- and the derived roads' marks, of the shoes its road statistics cover). A derived road's columns are
-- its runs of one colour in seq order: each road of each shoe as one string of r and b, cut into runs.
-- A partial (pipeline/marts/partials.py) that merges by summing `columns`. Feeds road_column_lengths.
WITH derived_runs AS (
    SELECT road, regexp_extract_all(string_agg(left(mark, 1), '' ORDER BY seq), 'r+|b+') AS runs
    FROM derived
    GROUP BY road, shoe_id
),
columns AS (
    SELECT road, count(*) AS length FROM big_road GROUP BY road, shoe_id, col
    UNION ALL
    SELECT road, length(run) FROM derived_runs, unnest(runs) AS t(run)
)
SELECT road, length, count(*) AS columns
FROM columns
GROUP BY road, length
