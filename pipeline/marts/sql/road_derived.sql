-- Derived roads from the big road's logical columns (big_road: road, shoe_id, seq, col, row).
-- Big eye boy, small road and cockroach pig compare with k = 1, 2, 3 columns back. Each
-- big-road entry at column c, row r (0-based) gets a mark:
--   r = 0 (a new column): columns c-1 and c-1-k have the same length -> red, else blue;
--   r >= 1: column c-k has an entry at row r -> red; none at row r but one at r-1 -> blue;
--           neither -> red.
-- A road starts with the first entry whose comparison column exists: r = 0 needs c-1-k >= 0,
-- r >= 1 needs c-k >= 0 (big eye boy: column 2 row 2, else column 3 row 1, counting from 1).
-- Column lengths are final lengths: every column compared with is already complete.
WITH lengths AS (
    SELECT shoe_id, col, count(*) AS length FROM big_road GROUP BY ALL
),
roads(road, k) AS (
    VALUES ('big_eye_boy', 1), ('small_road', 2), ('cockroach_pig', 3)
),
marked AS (
    SELECT r.road, e.shoe_id, e.seq AS entry_seq,
           CASE WHEN e.row = 0 THEN CASE WHEN before.length = compared.length THEN 'red' ELSE 'blue' END
                WHEN back.length = e.row THEN 'blue'
                ELSE 'red' END AS mark
    FROM big_road AS e
    CROSS JOIN roads AS r
    LEFT JOIN lengths AS before ON before.shoe_id = e.shoe_id AND before.col = e.col - 1
    LEFT JOIN lengths AS compared ON compared.shoe_id = e.shoe_id AND compared.col = e.col - 1 - r.k
    LEFT JOIN lengths AS back ON back.shoe_id = e.shoe_id AND back.col = e.col - r.k
    WHERE (e.row = 0 AND e.col >= r.k + 1) OR (e.row >= 1 AND e.col >= r.k)
)
SELECT road, shoe_id, CAST(row_number() OVER (PARTITION BY road, shoe_id ORDER BY entry_seq) - 1 AS INTEGER) AS seq,
       entry_seq, mark
FROM marked
