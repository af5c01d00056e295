-- Per system, over its complete sessions: the net per unit wagered R = sum(net) / sum(wagered), the ratio
-- estimator of the edge, with a 95 % interval by the delta method: R -+ 1.96 s / (sqrt(n) mean wagered),
-- s^2 = sum((net_i - R wagered_i)^2) / (n - 1) over the n sessions. The exact edge weighs each bet's exact
-- EV (relation `system_terms`) by what was staked on it: by Wald's identity, expected net = edge x
-- expected wagered, whatever the progression.
WITH complete AS (
    SELECT * FROM sessions WHERE ended <> 'incomplete'
), totals AS (
    SELECT system, count(*) AS sessions, sum(wagered) AS wagered, sum(net) AS net,
           sum(wagered_banker) AS wagered_banker, sum(wagered_player) AS wagered_player,
           CASE WHEN sum(wagered) > 0 THEN sum(net)::DOUBLE / sum(wagered)::DOUBLE END AS ratio
    FROM complete
    GROUP BY system
), spread AS (
    SELECT c.system, sum((c.net::DOUBLE - t.ratio * c.wagered::DOUBLE) ^ 2) AS squares
    FROM complete c
    JOIN totals t ON t.system = c.system
    GROUP BY c.system
), estimates AS (
    SELECT t.*,
           CASE WHEN t.sessions > 1
                THEN 1.96 * sqrt(s.squares / (t.sessions - 1) / t.sessions) / (t.wagered::DOUBLE / t.sessions)
           END AS half_width,
           (t.wagered_banker::DOUBLE * x.ev_banker + t.wagered_player::DOUBLE * x.ev_player
            + CASE WHEN t.wagered = t.wagered_banker + t.wagered_player THEN 0
                   ELSE (t.wagered - t.wagered_banker - t.wagered_player)::DOUBLE * x.ev_bet END)
           / nullif(t.wagered::DOUBLE, 0) AS exact_edge
    FROM totals t
    JOIN spread s ON s.system = t.system
    JOIN system_terms x ON x.system = t.system
)
SELECT system, sessions, wagered, net, ratio AS net_per_wagered,
       ratio - half_width AS net_per_wagered_low, ratio + half_width AS net_per_wagered_high, exact_edge,
       exact_edge BETWEEN ratio - half_width AND ratio + half_width AS edge_in_interval
FROM estimates
ORDER BY system
