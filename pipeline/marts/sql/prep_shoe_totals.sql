-- One row per shoe: counts and net totals (input: rounds). Feeds outcome_summary,
-- shoe_summary and the one-shoe horizon of payout_variance.
SELECT shoe_id,
       count(*) AS rounds,
       count_if(outcome = 'B') AS banker_wins,
       count_if(outcome = 'P') AS player_wins,
       count_if(outcome = 'T') AS ties,
       count_if(player_natural OR banker_natural) AS naturals,
       count_if(player_pair) AS player_pairs,
       count_if(banker_pair) AS banker_pairs,
       sum(COLUMNS('^net_'))
FROM rounds
GROUP BY shoe_id
