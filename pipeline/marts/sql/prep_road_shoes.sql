-- How many of a range's shoes have a big road, among the shoes its road statistics cover (input:
-- big_road of those shoes). A partial (pipeline/marts/partials.py) of one row that merges by
-- summing. Feeds road_colours, road_column_lengths and road_patterns.
SELECT count(DISTINCT shoe_id) AS shoes FROM big_road
