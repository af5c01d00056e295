-- The longest streak of each side in a shoe, as a distribution over shoes (0: none).
WITH longest AS (
    UNPIVOT (SELECT longest_banker_streak AS B, longest_player_streak AS P, longest_tie_streak AS T FROM shoe_totals)
    ON B, P, T INTO NAME side VALUE longest
)
SELECT side, longest, count(*) AS shoes, count(*) / sum(count(*)) OVER (PARTITION BY side) AS share
FROM longest
GROUP BY side, longest
ORDER BY side, longest
