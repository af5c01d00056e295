-- Bead plate: every round in order, ties included, top to bottom then left to right.
SELECT 'bead_plate' AS road, shoe_id,
       CAST(row_number() OVER (PARTITION BY shoe_id ORDER BY round) - 1 AS INTEGER) AS seq, round, outcome AS mark
FROM outcomes
