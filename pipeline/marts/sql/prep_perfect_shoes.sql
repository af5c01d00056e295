-- Per bet and shoe: the rounds, the rounds of positive exact EV (the ones perfect play bets), the
-- sum of those EVs and the net of those bets in the run (rounds.net_<bet>). A partial over a range
-- of shoes (pipeline/marts/partials.py): a shoe lies in one range. Feeds perfect_play.
WITH net_columns AS (
    UNPIVOT (SELECT shoe_id, round, COLUMNS('^net_') FROM rounds)
    ON COLUMNS('^net_') INTO NAME column_name VALUE net
),
nets AS (
    SELECT shoe_id, round, substr(column_name, 5) AS bet, net FROM net_columns
)
SELECT e.bet, e.shoe_id,
       count(*) AS rounds,
       count(*) FILTER (WHERE e.ev > 0) AS rounds_bet,
       coalesce(sum(e.ev) FILTER (WHERE e.ev > 0), 0) AS expected,
       coalesce(sum(n.net) FILTER (WHERE e.ev > 0), 0) AS net
FROM round_evs AS e
JOIN nets AS n ON n.shoe_id = e.shoe_id AND n.round = e.round AND n.bet = e.bet
GROUP BY e.bet, e.shoe_id
