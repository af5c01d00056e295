-- How many rounds had each outcome, streak index and combination of nets (a few hundred
-- rows): one scan of the rounds serves both the net histogram and the streak counts.
SELECT outcome, streak_index, COLUMNS('^net_'), count(*) AS weight
FROM rounds
GROUP BY ALL
