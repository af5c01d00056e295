-- Logical columns of a road: marks(road, shoe_id, seq, mark, ...) in order; a new column
-- starts whenever the mark changes (the winner on the big road, the colour on a derived
-- road). `col` counts columns from 0; `row` is the index inside the column, not capped at 6:
-- the entry's seq minus the seq that started its column (both from one window pass).
WITH flagged AS (
    SELECT *,
           CASE WHEN mark IS DISTINCT FROM lag(mark) OVER (PARTITION BY road, shoe_id ORDER BY seq)
                THEN 1 ELSE 0 END AS starts_column
    FROM marks
),
columns AS (
    SELECT *,
           CAST(sum(starts_column) OVER running - 1 AS INTEGER) AS col,
           max(CASE WHEN starts_column = 1 THEN seq END) OVER running AS column_start
    FROM flagged
    WINDOW running AS (PARTITION BY road, shoe_id ORDER BY seq ROWS UNBOUNDED PRECEDING)
)
SELECT * EXCLUDE (starts_column, column_start),
       CAST(seq - column_start AS INTEGER) AS row
FROM columns
