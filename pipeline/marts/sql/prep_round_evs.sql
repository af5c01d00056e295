-- Each round's exact EV per bet, one row per round and bet: (shoe_id, round, unseen_cards, bet, ev),
-- from round_ev's ev_<bet> columns (the EV per unit staked, from the cards a player has not seen).
-- Feeds advantage_by_depth and perfect_play.
WITH long AS (
    UNPIVOT (SELECT shoe_id, round, unseen_cards, COLUMNS('^ev_') FROM round_ev)
    ON COLUMNS('^ev_') INTO NAME column_name VALUE ev
)
SELECT shoe_id, round, unseen_cards, substr(column_name, 4) AS bet, ev
FROM long
