-- Per bet: a player who sees every card dealt and stakes one unit exactly when the round's exact
-- EV is positive. Expected units per shoe: the sum of the positive EVs of a shoe, averaged over
-- the shoes; realised: the net of those same bets in the run (rounds.net_<bet>), per shoe, with a
-- 95 % interval of the per-shoe mean (mean +- 1.96 SD / sqrt(shoes), shoes without a bet count 0).
WITH net_columns AS (
    UNPIVOT (SELECT shoe_id, round, COLUMNS('^net_') FROM rounds)
    ON COLUMNS('^net_') INTO NAME column_name VALUE net
),
nets AS (
    SELECT shoe_id, round, substr(column_name, 5) AS bet, net FROM net_columns
),
per_shoe AS (
    SELECT e.bet, e.shoe_id,
           count(*) AS rounds,
           count(*) FILTER (WHERE e.ev > 0) AS rounds_bet,
           coalesce(sum(e.ev) FILTER (WHERE e.ev > 0), 0) AS expected,
           coalesce(sum(n.net) FILTER (WHERE e.ev > 0), 0) AS net
    FROM round_evs AS e
    JOIN nets AS n ON n.shoe_id = e.shoe_id AND n.round = e.round AND n.bet = e.bet
    GROUP BY e.bet, e.shoe_id
)
SELECT bet,
       count(*) AS shoes,
       sum(rounds) AS rounds,
       sum(rounds_bet) AS rounds_bet,
       sum(rounds_bet) / sum(rounds) AS share_bet,
       sum(expected) / nullif(sum(rounds_bet), 0) AS mean_edge,
       avg(expected) AS expected_units_per_shoe,
       sum(net) AS realised_net,
       avg(net::DOUBLE) AS realised_units_per_shoe,
       avg(net::DOUBLE) - 1.96 * stddev_samp(net::DOUBLE) / sqrt(count(*)) AS realised_ci_low,
       avg(net::DOUBLE) + 1.96 * stddev_samp(net::DOUBLE) / sqrt(count(*)) AS realised_ci_high
FROM per_shoe
GROUP BY bet
ORDER BY bet
