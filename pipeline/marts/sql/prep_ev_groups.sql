-- How many rounds of each bet and depth bucket (1-26, 27-52, ... unseen cards) had an exact EV in each
-- bin of width 2^-16 (bin = floor(ev * 2^16)), with their sum, their co-moment about the bin's mean
-- (m2_ev: n x the population variance), their least EV and how many were above 0. Its rows are bounded
-- by the EVs' spread, not by the rounds: exact EVs hardly repeat (24.4M rounds of 300,000 shoes had
-- 23.4M distinct EVs of Banker). A partial (pipeline/marts/partials.py) that merges by summing rounds,
-- sum_ev and positive, adding the spread of the parts' means to m2_ev (Chan et al.), and taking the least
-- min_ev. Feeds advantage_by_depth.
SELECT bet, (unseen_cards - 1) // 26 * 26 + 1 AS unseen_low, floor(ev * 65536)::BIGINT AS bin,
       count(*) AS rounds, sum(ev) AS sum_ev, var_pop(ev) * count(*) AS m2_ev, min(ev) AS min_ev,
       count_if(ev > 0) AS positive
FROM round_evs
GROUP BY ALL
