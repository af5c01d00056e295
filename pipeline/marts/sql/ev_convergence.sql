-- Running EV per bet after the first n rounds of the run, at log-spaced n (1, 2, 5, 10,
-- 20, 50, ...; input checkpoints(rounds)) and at the run's last round, with the exact EV
-- and its 95 % band (exact EV +- 1.96 exact SD / sqrt(n)) for funnel charts.
-- Checkpoints below 100 read the run's opening rounds (the engine gives `opening`, the
-- rounds of the run's first file or files, at least its first 100); later ones the ranges'
-- merged nets before each checkpoint (prep_running_nets).
WITH first_rounds AS (
    SELECT run_row + 1 AS rounds, sum(COLUMNS('^net_')) OVER (ORDER BY run_row ROWS UNBOUNDED PRECEDING)
    FROM opening
    WHERE run_row < 100
),
running AS (
    SELECT * FROM first_rounds WHERE rounds < 100
    UNION ALL BY NAME SELECT checkpoint AS rounds, COLUMNS('^net_') FROM running_nets
),
at_checkpoints AS (
    SELECT running.* FROM running JOIN checkpoints USING (rounds)
),
long AS (
    UNPIVOT at_checkpoints ON COLUMNS('^net_') INTO NAME column_name VALUE net
)
SELECT substr(l.column_name, 5) AS bet, l.rounds, l.net::DOUBLE / l.rounds AS ev,
       e.ev AS exact_ev,
       e.ev - 1.96 * e.sd / sqrt(l.rounds) AS exact_band_low,
       e.ev + 1.96 * e.sd / sqrt(l.rounds) AS exact_band_high
FROM long AS l
JOIN exact_bets AS e ON e.bet = substr(l.column_name, 5)
ORDER BY e.position, l.rounds
