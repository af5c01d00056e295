-- One row per shoe: rounds, wins, ties, naturals (rounds with either), pairs, the longest
-- Banker and Player streaks, big-road columns, chops (changes of winner, ties skipped:
-- columns - 1) and the net of one unit staked on each bet in every round of the shoe. Built
-- from a range's shoes rows (the simulator writes them with each shoe: schemas/shoes.yaml) and
-- written by the range's task (pipeline/marts/partials.py).
SELECT shoe_id, rounds::BIGINT AS rounds, banker_wins, player_wins, ties, naturals, player_pairs, banker_pairs,
       longest_banker_streak, longest_player_streak, big_road_columns,
       greatest(big_road_columns - 1, 0) AS chops,
       COLUMNS('^net_')
FROM shoes
ORDER BY shoe_id
