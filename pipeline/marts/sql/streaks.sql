-- Streaks per side and length: how many, their share of that side's streaks, and the share
-- expected if rounds were independent: a geometric law q^(length-1) (1-q) with
-- q = P(B) / (P(B) + P(P)) for Banker, P(P) / (P(B) + P(P)) for Player (ties skipped, as on
-- the big road) and q = P(T) for ties, from the exact odds. Streaks end with their shoe,
-- so short streaks come out slightly more often than the law says: a streak is cut after any
-- entry with probability about shoes / entries (1/73 for 8 decks), which adds up to that much
-- to a length's share (about +0.7 points at length 1).
-- Counting: a streak of length L has one round at each streak_index 0 .. L-1, so the rounds
-- at index l-1 count the streaks of length l or more.
WITH p AS (
    PIVOT (SELECT outcome, probability FROM exact_outcomes) ON outcome USING any_value(probability)
),
q AS (
    SELECT 'B' AS side, B / (B + P) AS q FROM p
    UNION ALL SELECT 'P', P / (B + P) FROM p
    UNION ALL SELECT 'T', T FROM p
),
at_least AS (
    SELECT outcome AS side, streak_index + 1 AS length, CAST(sum(weight) AS BIGINT) AS streaks
    FROM round_groups
    GROUP BY ALL
),
counted AS (
    SELECT side, length,
           streaks - coalesce(lead(streaks) OVER (PARTITION BY side ORDER BY length), 0) AS streaks
    FROM at_least
)
SELECT c.side, c.length, c.streaks,
       c.streaks / sum(c.streaks) OVER (PARTITION BY c.side) AS share,
       q.q ^ (c.length - 1) * (1 - q.q) AS expected_share
FROM counted AS c
JOIN q USING (side)
WHERE c.streaks > 0
ORDER BY c.side, c.length
