-- How many rounds of each bet and depth bucket (1-26, 27-52, ... unseen cards) had each exact EV:
-- a partial over a range of shoes (pipeline/marts/partials.py) that merges by summing `rounds`.
-- Feeds advantage_by_depth.
SELECT bet, (unseen_cards - 1) // 26 * 26 + 1 AS unseen_low, ev, count(*) AS rounds
FROM round_evs
GROUP BY ALL
