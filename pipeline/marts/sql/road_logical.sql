-- Logical columns of a road: marks(road, shoe_id, seq, mark, ...) in order; a new column
-- starts whenever the mark changes (the winner on the big road, the colour on a derived
-- road). `col` counts columns from 0; `row` is the index inside the column, not capped at 6.
WITH flagged AS (
    SELECT *,
           CASE WHEN mark IS DISTINCT FROM lag(mark) OVER (PARTITION BY road, shoe_id ORDER BY seq)
                THEN 1 ELSE 0 END AS starts_column
    FROM marks
),
columns AS (
    SELECT *,
           CAST(sum(starts_column) OVER (PARTITION BY road, shoe_id ORDER BY seq ROWS UNBOUNDED PRECEDING) - 1
                AS INTEGER) AS col
    FROM flagged
)
SELECT * EXCLUDE (starts_column),
       CAST(row_number() OVER (PARTITION BY road, shoe_id, col ORDER BY seq) - 1 AS INTEGER) AS row
FROM columns
