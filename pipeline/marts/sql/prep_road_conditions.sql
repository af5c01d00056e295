-- Each condition's observations in a range and how many of them the next big-road result was B
-- (input: big_road and derived of the shoes its road statistics cover). Conditions: last_k, the k
-- results before the entry (ties skipped, oldest first, in the same shoe); big_eye_boy, small_road,
-- cockroach_pig: the mark that road gave the entry before (beside it in derived, the next result,
-- next_mark). A partial (pipeline/marts/partials.py) that merges by summing `observations` and
-- `next_banker`. Feeds road_patterns.
WITH previous AS (
    SELECT shoe_id, seq, mark,
           lag(mark, 1) OVER w AS m1, lag(mark, 2) OVER w AS m2,
           lag(mark, 3) OVER w AS m3, lag(mark, 4) OVER w AS m4
    FROM big_road
    WINDOW w AS (PARTITION BY shoe_id ORDER BY seq)
),
conditions AS (
    SELECT 'last_1' AS condition, m1 AS pattern, mark FROM previous WHERE m1 IS NOT NULL
    UNION ALL SELECT 'last_2', m2 || m1, mark FROM previous WHERE m2 IS NOT NULL
    UNION ALL SELECT 'last_3', m3 || m2 || m1, mark FROM previous WHERE m3 IS NOT NULL
    UNION ALL SELECT 'last_4', m4 || m3 || m2 || m1, mark FROM previous WHERE m4 IS NOT NULL
    UNION ALL
    SELECT road, mark, next_mark FROM derived WHERE next_mark IS NOT NULL
)
SELECT condition, pattern, count(*) AS observations, count_if(mark = 'B') AS next_banker
FROM conditions
GROUP BY condition, pattern
