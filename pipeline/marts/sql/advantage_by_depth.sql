-- Per bet and depth: the exact EV of the rounds dealt with 1-26, 27-52, ... unseen cards
-- (26-card buckets, both edges included), from ev_groups (rounds per bet, bucket and EV).
-- Percentiles are nearest-rank: the EV at rank max(1, ceil(p n)) of the bucket's n rounds sorted
-- by EV (as quantile_disc), an EV of the bucket itself.
WITH buckets AS (
    SELECT bet, unseen_low, sum(rounds)::BIGINT AS rounds, sum(ev * rounds) / sum(rounds) AS mean_ev
    FROM ev_groups
    GROUP BY bet, unseen_low
),
ranked AS (
    SELECT bet, unseen_low, ev, rounds,
           sum(rounds) OVER (PARTITION BY bet, unseen_low ORDER BY ev ROWS UNBOUNDED PRECEDING) AS through
    FROM ev_groups
)
SELECT b.bet, b.unseen_low, b.unseen_low + 25 AS unseen_high, b.rounds, b.mean_ev,
       sqrt(sum(r.rounds * (r.ev - b.mean_ev) ^ 2) / nullif(b.rounds - 1, 0)) AS sd_ev,
       coalesce(sum(r.rounds) FILTER (WHERE r.ev > 0), 0) / b.rounds AS share_positive,
       min(r.ev) FILTER (WHERE r.through >= greatest(1, ceil(b.rounds * 0.01))) AS p01,
       min(r.ev) FILTER (WHERE r.through >= greatest(1, ceil(b.rounds * 0.5))) AS p50,
       min(r.ev) FILTER (WHERE r.through >= greatest(1, ceil(b.rounds * 0.99))) AS p99
FROM buckets AS b
JOIN ranked AS r ON r.bet = b.bet AND r.unseen_low = b.unseen_low
GROUP BY b.bet, b.unseen_low, b.rounds, b.mean_ev
ORDER BY b.bet, b.unseen_low
