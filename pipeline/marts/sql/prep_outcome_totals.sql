-- A range's rounds, shoes and wins of each side, from its shoes rows (the simulator writes them with
-- each shoe: schemas/shoes.yaml). A partial (pipeline/marts/partials.py) of one row that merges by
-- summing. Feeds outcome_summary.
SELECT sum(rounds)::BIGINT AS rounds, count(*) AS shoes, sum(banker_wins)::BIGINT AS banker_wins,
       sum(player_wins)::BIGINT AS player_wins, sum(ties)::BIGINT AS ties
FROM shoes
