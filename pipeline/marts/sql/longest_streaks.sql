-- The longest streak of each side in a shoe, as a distribution over shoes (0: none).
SELECT side, longest, shoes, shoes / sum(shoes) OVER (PARTITION BY side) AS share
FROM longest_counts
ORDER BY side, longest
