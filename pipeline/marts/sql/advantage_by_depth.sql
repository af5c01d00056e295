-- Per bet and depth: the exact EV of the rounds dealt with 1-26, 27-52, ... unseen cards
-- (26-card buckets, both edges included), from ev_groups (per bet, bucket and EV bin of width 2^-16:
-- rounds, sum_ev, m2_ev, min_ev, positive). The mean, the SD (the bins' co-moments and the spread of
-- their means) and the share above 0 are over every round. A percentile is nearest-rank to within a bin:
-- the least EV of the first bin, in EV order, whose running count reaches rank max(1, ceil(p n)); an EV
-- some round had, less than 2^-16 below the one at that rank (equal to it when no two EVs closer than
-- 2^-16 differ).
WITH buckets AS (
    SELECT bet, unseen_low, sum(rounds)::BIGINT AS rounds, sum(sum_ev) / sum(rounds) AS mean_ev
    FROM ev_groups
    GROUP BY bet, unseen_low
),
ranked AS (
    SELECT bet, unseen_low, rounds, sum_ev, m2_ev, min_ev, positive,
           sum(rounds) OVER (PARTITION BY bet, unseen_low ORDER BY bin ROWS UNBOUNDED PRECEDING) AS through
    FROM ev_groups
)
SELECT b.bet, b.unseen_low, b.unseen_low + 25 AS unseen_high, b.rounds, b.mean_ev,
       sqrt(sum(r.m2_ev + r.rounds * (r.sum_ev / r.rounds - b.mean_ev) ^ 2) / nullif(b.rounds - 1, 0)) AS sd_ev,
       sum(r.positive) / b.rounds AS share_positive,
       min(r.min_ev) FILTER (WHERE r.through >= greatest(1, ceil(b.rounds * 0.01))) AS p01,
       min(r.min_ev) FILTER (WHERE r.through >= greatest(1, ceil(b.rounds * 0.5))) AS p50,
       min(r.min_ev) FILTER (WHERE r.through >= greatest(1, ceil(b.rounds * 0.99))) AS p99
FROM buckets AS b
JOIN ranked AS r ON r.bet = b.bet AND r.unseen_low = b.unseen_low
GROUP BY b.bet, b.unseen_low, b.rounds, b.mean_ev
ORDER BY b.bet, b.unseen_low
