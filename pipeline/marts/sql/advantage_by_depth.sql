-- Per bet and depth: the exact EV of the rounds dealt with 1-26, 27-52, ... unseen cards
-- (26-card buckets, both edges included). Percentiles are nearest-rank: the EV at rank
-- ceil(p n / 100) of the bucket's n rounds sorted by EV (quantile_disc), an EV of the bucket itself.
WITH buckets AS (
    SELECT bet,
           (unseen_cards - 1) // 26 * 26 + 1 AS unseen_low,
           count(*) AS rounds,
           avg(ev) AS mean_ev,
           stddev_samp(ev) AS sd_ev,
           count(*) FILTER (WHERE ev > 0) / count(*) AS share_positive,
           quantile_disc(ev, [0.01, 0.5, 0.99]) AS percentiles
    FROM round_evs
    GROUP BY bet, unseen_low
)
SELECT bet, unseen_low, unseen_low + 25 AS unseen_high, rounds, mean_ev, sd_ev, share_positive,
       percentiles[1] AS p01, percentiles[2] AS p50, percentiles[3] AS p99
FROM buckets
ORDER BY bet, unseen_low
