-- Big road entries: one per round that is not a tie, numbered `seq` from 0 within the shoe.
-- Input: outcomes(shoe_id, round, outcome). A tie takes no cell: it is marked on the entry
-- before it, and ties before the shoe's first result are marked on the first entry.
WITH numbered AS (
    SELECT shoe_id, round, outcome,
           CAST(sum(CASE WHEN outcome <> 'T' THEN 1 ELSE 0 END)
               OVER (PARTITION BY shoe_id ORDER BY round ROWS UNBOUNDED PRECEDING) - 1 AS INTEGER) AS seq
    FROM outcomes
),
ties AS (
    SELECT shoe_id, greatest(seq, 0) AS seq, CAST(count(*) AS INTEGER) AS ties
    FROM numbered
    WHERE outcome = 'T'
    GROUP BY ALL
)
SELECT 'big_road' AS road, n.shoe_id, n.seq, n.round, n.outcome AS mark, coalesce(t.ties, 0)::INTEGER AS ties
FROM numbered AS n
LEFT JOIN ties AS t USING (shoe_id, seq)
WHERE n.outcome <> 'T'
