-- Where each shoe starts in the run's order of rounds (shoe, round), counted from 0.
SELECT shoe_id,
       coalesce(sum(rounds) OVER (ORDER BY shoe_id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)
           AS first_round
FROM shoe_totals
