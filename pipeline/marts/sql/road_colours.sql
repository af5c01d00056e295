-- How often each mark appears on each road, over the shoes the road statistics cover (from the
-- merged partials prep_road_marks and prep_road_shoes): B and P on the big road, red and blue on
-- the derived roads.
SELECT road, mark, (SELECT shoes FROM road_shoes) AS shoes, count, count / sum(count) OVER (PARTITION BY road) AS share
FROM road_marks
ORDER BY list_position(['big_road', 'big_eye_boy', 'small_road', 'cockroach_pig'], road), mark
