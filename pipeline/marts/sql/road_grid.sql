-- Where each entry of a road is drawn on the casino's 6-row grid (input: logical(road,
-- shoe_id, seq, col, row)). Column 0 starts at draw column 0 on the top row; each later
-- column starts on the top row one draw column right of the previous column's start, or
-- right of a tail already lying on the top row. A column goes down until the sixth row or
-- until the cell below is taken by an earlier tail; then it turns right (the dragon tail)
-- and keeps going right on that row. tail_end_R is the last draw column a tail covers on
-- row R (-1 for none); a tail on row R that reaches a column's start blocks it at row R.
WITH RECURSIVE lengths AS (
    SELECT road, shoe_id, col, count(*) AS length FROM logical GROUP BY ALL
),
placed(road, shoe_id, col, start, depth, t0, t1, t2, t3, t4, t5) AS (
    SELECT road, shoe_id, 0, 0, 6, -1, -1, -1, -1, -1, CASE WHEN length > 6 THEN length - 6 ELSE -1 END
    FROM lengths WHERE col = 0
    UNION ALL
    SELECT p.road, p.shoe_id, n.col, s.start, d.depth,
           CASE WHEN d.depth = 1 AND n.length > 1 THEN s.start + n.length - 1 ELSE p.t0 END,
           CASE WHEN d.depth = 2 AND n.length > 2 THEN s.start + n.length - 2 ELSE p.t1 END,
           CASE WHEN d.depth = 3 AND n.length > 3 THEN s.start + n.length - 3 ELSE p.t2 END,
           CASE WHEN d.depth = 4 AND n.length > 4 THEN s.start + n.length - 4 ELSE p.t3 END,
           CASE WHEN d.depth = 5 AND n.length > 5 THEN s.start + n.length - 5 ELSE p.t4 END,
           CASE WHEN d.depth = 6 AND n.length > 6 THEN s.start + n.length - 6 ELSE p.t5 END
    FROM placed AS p
    JOIN lengths AS n ON n.road = p.road AND n.shoe_id = p.shoe_id AND n.col = p.col + 1
    CROSS JOIN LATERAL (SELECT greatest(p.start + 1, p.t0 + 1) AS start) AS s
    CROSS JOIN LATERAL (
        SELECT CASE WHEN p.t1 >= s.start THEN 1 WHEN p.t2 >= s.start THEN 2 WHEN p.t3 >= s.start THEN 3
                    WHEN p.t4 >= s.start THEN 4 WHEN p.t5 >= s.start THEN 5 ELSE 6 END AS depth
    ) AS d
)
SELECT l.road, l.shoe_id, l.seq,
       CAST(CASE WHEN l.row < p.depth THEN p.start ELSE p.start + l.row - p.depth + 1 END AS INTEGER) AS draw_col,
       CAST(least(l.row, p.depth - 1) AS INTEGER) AS draw_row
FROM logical AS l
JOIN placed AS p USING (road, shoe_id, col)
