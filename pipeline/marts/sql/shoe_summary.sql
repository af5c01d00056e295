-- One row per shoe: rounds, wins, ties, naturals (rounds with either), pairs, the longest
-- Banker and Player streaks, big-road columns, chops (changes of winner, ties skipped:
-- columns - 1) and the net of one unit staked on each bet in every round of the shoe.
WITH streaks AS (
    SELECT shoe_id,
           max(length) FILTER (WHERE side = 'B') AS longest_banker_streak,
           max(length) FILTER (WHERE side = 'P') AS longest_player_streak,
           count(*) FILTER (WHERE side <> 'T') AS big_road_columns
    FROM streak_list
    GROUP BY shoe_id
)
SELECT t.shoe_id, t.rounds, t.banker_wins, t.player_wins, t.ties, t.naturals, t.player_pairs, t.banker_pairs,
       coalesce(s.longest_banker_streak, 0) AS longest_banker_streak,
       coalesce(s.longest_player_streak, 0) AS longest_player_streak,
       coalesce(s.big_road_columns, 0) AS big_road_columns,
       greatest(coalesce(s.big_road_columns, 0) - 1, 0) AS chops,
       COLUMNS('^net_')
FROM shoe_totals AS t
LEFT JOIN streaks AS s USING (shoe_id)
ORDER BY t.shoe_id
