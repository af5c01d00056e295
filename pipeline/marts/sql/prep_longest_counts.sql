-- How many of a range's shoes had each longest streak of each side (0: none), from its shoes rows.
-- A partial (pipeline/marts/partials.py) that merges by summing `shoes`. Feeds longest_streaks.
WITH longest AS (
    UNPIVOT (SELECT longest_banker_streak AS B, longest_player_streak AS P, longest_tie_streak AS T FROM shoes)
    ON B, P, T INTO NAME side VALUE longest
)
SELECT side, longest, count(*) AS shoes
FROM longest
GROUP BY side, longest
