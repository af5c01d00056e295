-- Banker, Player and Tie: counts and shares against the exact shares for the run's rules
-- and decks; z = (count - n p) / sqrt(n p (1 - p)).
WITH totals AS (
    SELECT sum(rounds) AS rounds, sum(shoes)::BIGINT AS shoes,
           sum(banker_wins) AS B, sum(player_wins) AS P, sum(ties) AS T
    FROM outcome_totals
),
counts AS (
    UNPIVOT totals ON B, P, T INTO NAME outcome VALUE count
)
SELECT c.outcome, c.rounds, c.shoes, c.count,
       c.count / c.rounds AS share,
       e.probability AS exact_share,
       (c.count - c.rounds * e.probability) / sqrt(c.rounds * e.probability * (1 - e.probability)) AS z_score
FROM counts AS c
JOIN exact_outcomes AS e USING (outcome)
ORDER BY c.outcome
