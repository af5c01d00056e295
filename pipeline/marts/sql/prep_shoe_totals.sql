-- One row per shoe: counts, streaks and net totals. The simulator writes them with each shoe
-- (schemas/shoes.yaml; the simulation tests check them against the rounds), so this reads a
-- row per shoe instead of aggregating every round. Feeds outcome_summary, longest_streaks,
-- shoe_summary and the one-shoe horizon of payout_variance.
SELECT shoe_id, rounds::BIGINT AS rounds, banker_wins, player_wins, ties, naturals, player_pairs, banker_pairs,
       longest_banker_streak, longest_player_streak, longest_tie_streak, big_road_columns,
       COLUMNS('^net_')
FROM shoes
