-- The blocks of 100 and 1,000 rounds of a range that are not wholly inside it: at most two of each
-- size per range. A partial (pipeline/marts/partials.py) that merges by summing rounds and nets by
-- (size, block), so a session across two ranges is completed by the merge; a block still short of
-- its size is the run's incomplete last session. Feeds prep_session_histogram.
SELECT size, block, rounds, COLUMNS('^net_')
FROM blocks
WHERE rounds < size
