-- Every streak of every shoe (shoe_id, side, length). Banker and Player streaks are the big
-- road's columns: ties do not break them, as on the big road. Tie streaks are runs of
-- consecutive tied rounds. A streak ends at the end of its shoe.
WITH tie_rounds AS (
    SELECT shoe_id, round - row_number() OVER (PARTITION BY shoe_id ORDER BY round) AS run
    FROM rounds
    WHERE outcome = 'T'
)
SELECT shoe_id, mark AS side, count(*) AS length FROM big_road GROUP BY shoe_id, col, mark
UNION ALL
SELECT shoe_id, 'T' AS side, count(*) AS length FROM tie_rounds GROUP BY shoe_id, run
