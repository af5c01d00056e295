-- Do the roads predict? P(next big-road result = B | condition) against the unconditional
-- share of B among big-road entries, with z = (p - p0) / sqrt(p0 (1 - p0) / n).
-- Conditions: last_k, the k results before the entry (ties skipped, oldest first, in the
-- same shoe); big_eye_boy, small_road, cockroach_pig: the mark that road gave the entry
-- before. Over the shoes the roads were built for.
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
    SELECT d.road, d.mark, b.mark
    FROM derived AS d
    JOIN big_road AS b ON b.shoe_id = d.shoe_id AND b.seq = d.entry_seq + 1
),
base AS (
    SELECT count_if(mark = 'B') / count(*) AS p0, count(DISTINCT shoe_id) AS shoes FROM big_road
)
SELECT c.condition, c.pattern, any_value(base.shoes) AS shoes, count(*) AS observations, count_if(c.mark = 'B') AS next_banker,
       count_if(c.mark = 'B') / count(*) AS p_next_banker,
       any_value(base.p0) AS p_unconditional,
       (count_if(c.mark = 'B') / count(*) - any_value(base.p0))
           / sqrt(any_value(base.p0) * (1 - any_value(base.p0)) / count(*)) AS z_score
FROM conditions AS c
CROSS JOIN base
GROUP BY c.condition, c.pattern
ORDER BY c.condition, c.pattern
