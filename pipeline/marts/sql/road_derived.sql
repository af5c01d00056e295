-- Derived roads from the big road's logical columns (big_road: road, shoe_id, seq, col, row).
-- Big eye boy, small road and cockroach pig compare with k = 1, 2, 3 columns back. Each
-- big-road entry at column c, row r (0-based) gets a mark:
--   r = 0 (a new column): columns c-1 and c-1-k have the same length -> red, else blue;
--   r >= 1: column c-k has an entry at row r -> red; none at row r but one at r-1 -> blue;
--           neither -> red.
-- A road starts with the first entry whose comparison column exists: r = 0 needs c-1-k >= 0,
-- r >= 1 needs c-k >= 0 (big eye boy: column 2 row 2, else column 3 row 1, counting from 1).
-- Column lengths are final lengths: every column compared with is already complete.
-- Either way a derived road starts at the big-road entry after the first of column k (its second
-- row, or column k+1 when column k holds one entry), so an entry's seq on it is its big-road seq
-- minus that entry's, and every later entry is on it.
WITH lengths AS (
    SELECT shoe_id, col, count(*) AS length, min(seq) AS first_seq FROM big_road GROUP BY ALL
),
roads(road, k) AS (
    VALUES ('big_eye_boy', 1), ('small_road', 2), ('cockroach_pig', 3)
),
-- Where each road starts in each shoe: the big-road seq of its first entry.
starts AS (
    SELECT r.road, l.shoe_id, l.first_seq + 1 AS first_entry
    FROM lengths AS l
    JOIN roads AS r ON l.col = r.k
),
-- For every column c and road k: the lengths of columns c-1, c-1-k and c-k (null if none).
compared AS (
    SELECT l.shoe_id, l.col, r.road,
           lag(l.length, 1) OVER w AS before,
           CASE r.k WHEN 1 THEN lag(l.length, 2) OVER w WHEN 2 THEN lag(l.length, 3) OVER w
                    ELSE lag(l.length, 4) OVER w END AS compared,
           CASE r.k WHEN 1 THEN lag(l.length, 1) OVER w WHEN 2 THEN lag(l.length, 2) OVER w
                    ELSE lag(l.length, 3) OVER w END AS back
    FROM lengths AS l
    CROSS JOIN roads AS r
    WINDOW w AS (PARTITION BY r.road, l.shoe_id ORDER BY l.col)
)
SELECT c.road, e.shoe_id, CAST(e.seq - s.first_entry AS INTEGER) AS seq, e.seq AS entry_seq,
       CASE WHEN e.row = 0 THEN CASE WHEN c.before = c.compared THEN 'red' ELSE 'blue' END
            WHEN c.back = e.row THEN 'blue'
            ELSE 'red' END AS mark
FROM big_road AS e
JOIN compared AS c ON c.shoe_id = e.shoe_id AND c.col = e.col
JOIN starts AS s ON s.road = c.road AND s.shoe_id = e.shoe_id
WHERE e.seq >= s.first_entry
