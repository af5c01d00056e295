-- Per bet: a player who sees every card dealt and stakes one unit exactly when the round's exact
-- EV is positive, from perfect_shoes (per bet and shoe). Expected units per shoe: the sum of the
-- positive EVs of a shoe, averaged over the shoes; realised: the net of those same bets in the run,
-- per shoe, with a 95 % interval of the per-shoe mean (mean +- 1.96 SD / sqrt(shoes), shoes without
-- a bet count 0).
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
FROM perfect_shoes
GROUP BY bet
ORDER BY bet
