-- The big road of rounds that carry their place on it (the rounds contract's big_road_column and
-- streak_index), as road_big_road.sql then road_logical.sql give it but for the ties, which the road
-- statistics do not count: one entry per non-tie round, `seq` its column's first seq plus its row.
-- Input: outcomes(shoe_id, round, outcome, big_road_column, streak_index).
WITH entries AS (
    SELECT shoe_id, round, outcome AS mark, CAST(big_road_column AS INTEGER) AS col,
           CAST(streak_index AS INTEGER) AS row
    FROM outcomes
    WHERE outcome <> 'T'
),
column_starts AS (
    SELECT shoe_id, col,
           CAST(coalesce(sum(count(*)) OVER (PARTITION BY shoe_id ORDER BY col
                                             ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)
                AS INTEGER) AS first_seq
    FROM entries
    GROUP BY shoe_id, col
)
SELECT 'big_road' AS road, e.shoe_id, s.first_seq + e.row AS seq, e.round, e.mark, e.col, e.row
FROM entries AS e
JOIN column_starts AS s USING (shoe_id, col)
