-- Per bet: rounds, hits (net > 0), exact total net, EV per unit with a 95 % interval
-- (EV +- 1.96 SD / sqrt(n)), sample SD per unit, the exact EV and SD, and
-- z = (EV - exact EV) / (exact SD / sqrt(n)); in a game with options the exact values are the
-- strategy pair's, named beside them.
WITH per_bet AS (
    SELECT bet,
           sum(sessions) AS rounds,
           sum(sessions) FILTER (WHERE net > 0) AS hits,
           sum(sessions * net) AS total_net,
           sum(sessions * net::DOUBLE) / sum(sessions) AS ev,
           CASE WHEN sum(sessions) > 1
                THEN sqrt(greatest((sum(sessions * net::DOUBLE * net::DOUBLE)
                                    - sum(sessions * net::DOUBLE) ^ 2 / sum(sessions)) / (sum(sessions) - 1), 0))
           END AS sd
    FROM session_histogram
    WHERE horizon = 'round'
    GROUP BY bet
)
SELECT b.bet, b.rounds, coalesce(b.hits, 0) AS hits, b.total_net, b.ev,
       b.ev - 1.96 * b.sd / sqrt(b.rounds) AS ev_ci_low,
       b.ev + 1.96 * b.sd / sqrt(b.rounds) AS ev_ci_high,
       b.sd, e.ev AS exact_ev, e.sd AS exact_sd,
       (b.ev - e.ev) / (e.sd / sqrt(b.rounds)) AS z_score,
       e.player_strategy, e.banker_strategy
FROM per_bet AS b
JOIN exact_bets AS e USING (bet)
ORDER BY e.position
