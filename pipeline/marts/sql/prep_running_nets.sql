-- For each checkpoint n of at least 100 rounds (input checkpoints), a range's rounds and nets among
-- the run's first n rounds (run_row < n). Such checkpoints are multiples of 100 or the run's rounds,
-- so a 100-round block lies wholly among them when its first round does. A partial
-- (pipeline/marts/partials.py) that merges by summing rounds and nets by checkpoint. Feeds
-- ev_convergence.
SELECT c.checkpoint, sum(b.rounds)::BIGINT AS rounds, sum(COLUMNS('^net_'))
FROM blocks AS b
JOIN (SELECT rounds AS checkpoint FROM checkpoints WHERE rounds >= 100) AS c
  ON b.size = 100 AND 100 * b.block < c.checkpoint
GROUP BY c.checkpoint
