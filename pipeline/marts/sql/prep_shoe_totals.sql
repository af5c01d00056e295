-- One row per shoe: counts, streaks and net totals (input: rounds). Feeds outcome_summary,
-- longest_streaks, shoe_summary and the one-shoe horizon of payout_variance. The streaks
-- come from the simulator's streak_index and big_road_column (see schemas/rounds.yaml).
SELECT shoe_id,
       count(*) AS rounds,
       count_if(outcome = 'B') AS banker_wins,
       count_if(outcome = 'P') AS player_wins,
       count_if(outcome = 'T') AS ties,
       count_if(player_natural OR banker_natural) AS naturals,
       count_if(player_pair) AS player_pairs,
       count_if(banker_pair) AS banker_pairs,
       coalesce(max(streak_index) FILTER (WHERE outcome = 'B') + 1, 0) AS longest_banker_streak,
       coalesce(max(streak_index) FILTER (WHERE outcome = 'P') + 1, 0) AS longest_player_streak,
       coalesce(max(streak_index) FILTER (WHERE outcome = 'T') + 1, 0) AS longest_tie_streak,
       coalesce(max(big_road_column) FILTER (WHERE outcome <> 'T') + 1, 0) AS big_road_columns,
       sum(COLUMNS('^net_'))
FROM rounds
GROUP BY shoe_id
