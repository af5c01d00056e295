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
-- Beside each mark, next_mark: the big road's next result (null after the shoe's last), which the
-- road statistics ask for (prep_road_conditions.sql): the entry's own mark while its column goes on,
-- else the other side's, the columns alternating.
WITH lengths AS (
    SELECT shoe_id, col, count(*) AS length, min(seq) AS first_seq FROM big_road GROUP BY ALL
),
-- For every column c: its length l0, the lengths of columns c-1 .. c-4 (null if none), whether it is the
-- shoe's last, and where each road starts in its shoe (start<k>: the big-road seq after the first entry
-- of column k; null if the shoe has none).
behind AS (
    SELECT shoe_id, col, length AS l0, col = max(col) OVER s AS last_column,
           lag(length, 1) OVER w AS l1, lag(length, 2) OVER w AS l2,
           lag(length, 3) OVER w AS l3, lag(length, 4) OVER w AS l4,
           min(first_seq) FILTER (WHERE col = 1) OVER s + 1 AS start1,
           min(first_seq) FILTER (WHERE col = 2) OVER s + 1 AS start2,
           min(first_seq) FILTER (WHERE col = 3) OVER s + 1 AS start3
    FROM lengths
    WINDOW w AS (PARTITION BY shoe_id ORDER BY col), s AS (PARTITION BY shoe_id)
),
roads(road, k) AS (
    VALUES ('big_eye_boy', 1), ('small_road', 2), ('cockroach_pig', 3)
),
-- Every big-road entry once per road, with the lengths road k compares: c-1, c-1-k and c-k.
compared AS (
    SELECT r.road, e.shoe_id, e.seq, e.row, e.mark AS entry_mark, b.l0, b.last_column, b.l1 AS before,
           CASE r.k WHEN 1 THEN b.l2 WHEN 2 THEN b.l3 ELSE b.l4 END AS compared,
           CASE r.k WHEN 1 THEN b.l1 WHEN 2 THEN b.l2 ELSE b.l3 END AS back,
           CASE r.k WHEN 1 THEN b.start1 WHEN 2 THEN b.start2 ELSE b.start3 END AS first_entry
    FROM big_road AS e
    JOIN behind AS b USING (shoe_id, col)
    CROSS JOIN roads AS r
)
SELECT road, shoe_id, CAST(seq - first_entry AS INTEGER) AS seq, seq AS entry_seq,
       CASE WHEN row = 0 THEN CASE WHEN before = compared THEN 'red' ELSE 'blue' END
            WHEN back = row THEN 'blue'
            ELSE 'red' END AS mark,
       CASE WHEN row + 1 < l0 THEN entry_mark
            WHEN NOT last_column THEN CASE entry_mark WHEN 'B' THEN 'P' ELSE 'B' END END AS next_mark
FROM compared
WHERE seq >= first_entry
