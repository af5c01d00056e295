-- The distribution of logical column lengths (tails included) on each road, over the shoes the
-- road statistics cover (from the merged partials prep_road_columns and prep_road_shoes).
SELECT road, length, (SELECT shoes FROM road_shoes) AS shoes, columns, columns / sum(columns) OVER (PARTITION BY road) AS share
FROM road_columns
ORDER BY list_position(['big_road', 'big_eye_boy', 'small_road', 'cockroach_pig'], road), length
