-- Per bet: a player who sees every card dealt and stakes one unit exactly when the round's exact
-- EV is positive, from perfect_bets (per bet: sums over shoes). Expected units per shoe: the sum of
-- the positive EVs of a shoe, averaged over the shoes; realised: the net of those same bets in the
-- run, per shoe, with a 95 % interval of the per-shoe mean (mean +- 1.96 SD / sqrt(shoes), the
-- sample SD from m2_net; shoes without a bet count 0).
SELECT bet, shoes, rounds, rounds_bet,
       rounds_bet / rounds AS share_bet,
       expected / nullif(rounds_bet, 0) AS mean_edge,
       expected / shoes AS expected_units_per_shoe,
       sum_net AS realised_net,
       sum_net::DOUBLE / shoes AS realised_units_per_shoe,
       realised_units_per_shoe - 1.96 * sqrt(m2_net / nullif(shoes - 1, 0)) / sqrt(shoes) AS realised_ci_low,
       realised_units_per_shoe + 1.96 * sqrt(m2_net / nullif(shoes - 1, 0)) / sqrt(shoes) AS realised_ci_high
FROM perfect_bets
ORDER BY bet
