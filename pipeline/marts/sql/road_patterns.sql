-- Do the roads predict? P(next big-road result = B | condition) against the unconditional
-- share of B among big-road entries, with z = (p - p0) / sqrt(p0 (1 - p0) / n), over the shoes
-- the road statistics cover (from the merged partials prep_road_conditions, prep_road_marks and
-- prep_road_shoes; the conditions are described in prep_road_conditions.sql).
WITH base AS (
    SELECT sum(count) FILTER (WHERE mark = 'B') / sum(count) AS p0, any_value(s.shoes) AS shoes
    FROM road_marks CROSS JOIN road_shoes AS s
    WHERE road = 'big_road'
)
SELECT c.condition, c.pattern, base.shoes, c.observations, c.next_banker,
       c.next_banker / c.observations AS p_next_banker,
       base.p0 AS p_unconditional,
       (c.next_banker / c.observations - base.p0) / sqrt(base.p0 * (1 - base.p0) / c.observations) AS z_score
FROM road_conditions AS c
CROSS JOIN base
ORDER BY c.condition, c.pattern
