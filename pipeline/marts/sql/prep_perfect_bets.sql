-- Per bet, over a range's shoes: the shoes and rounds, the rounds of positive exact EV (the ones
-- perfect play bets), the sum of those EVs, and of the net of those bets in the run
-- (rounds.net_<bet>) per shoe its sum and its co-moment about the range's mean (m2_net: shoes x
-- the population variance; a shoe without a bet counts 0). A partial (pipeline/marts/partials.py)
-- that merges by summing, adding the spread of the parts' means to m2_net. Feeds perfect_play.
WITH net_columns AS (
    UNPIVOT (SELECT shoe_id, round, COLUMNS('^net_') FROM rounds)
    ON COLUMNS('^net_') INTO NAME column_name VALUE net
),
nets AS (
    SELECT shoe_id, round, substr(column_name, 5) AS bet, net FROM net_columns
),
per_shoe AS (
    SELECT e.bet, e.shoe_id,
           count(*) AS rounds,
           count(*) FILTER (WHERE e.ev > 0) AS rounds_bet,
           coalesce(sum(e.ev) FILTER (WHERE e.ev > 0), 0) AS expected,
           coalesce(sum(n.net) FILTER (WHERE e.ev > 0), 0) AS net
    FROM round_evs AS e
    JOIN nets AS n ON n.shoe_id = e.shoe_id AND n.round = e.round AND n.bet = e.bet
    GROUP BY e.bet, e.shoe_id
)
SELECT bet, count(*) AS shoes, sum(rounds)::BIGINT AS rounds, sum(rounds_bet)::BIGINT AS rounds_bet,
       sum(expected) AS expected, sum(net) AS sum_net, var_pop(net::DOUBLE) * count(*) AS m2_net
FROM per_shoe
GROUP BY bet
