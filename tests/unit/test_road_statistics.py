"""The road statistics (road_colours, road_column_lengths, road_patterns) as partials of shoe ranges,
merged (pipeline/marts/partials.py), against a count in plain Python over the roads of every shoe at
once: the marks, the logical column lengths, and what followed each condition."""

from collections import Counter
from itertools import groupby
from math import sqrt
import random

import duckdb
import polars as pl
import pyarrow as pa
import pytest
from reference import big_road_places

from pipeline.marts import marts_polars, partials_polars, roads_duckdb
from pipeline.marts.marts_duckdb import ROAD_PARTIALS
from pipeline.marts.partials import MERGED, merge
from pipeline.marts.roads_duckdb import sql

SHOES, RANGES = 45, ((0, 7), (7, 30), (30, 45))


def outcomes(first: int, last: int) -> pa.Table:
    """Shoes [first, last) of 70 random results, as rounds: with each round's place on the big road."""
    rows = []
    for shoe in range(first, last):
        results = "".join(random.Random(shoe).choices("BPT", [0.46, 0.45, 0.09], k=70))
        places = big_road_places(results)
        rows += [(shoe, n, result, *place) for n, (result, place) in enumerate(zip(results, places), 1)]
    shoe_ids, rounds, results, columns, streaks = zip(*rows)
    return pa.table({"shoe_id": pa.array(shoe_ids, pa.int64()), "round": pa.array(rounds, pa.int16()),
                     "outcome": list(results), "big_road_column": pa.array(columns, pa.int16()),
                     "streak_index": pa.array(streaks, pa.int16())})


def roads(first: int, last: int) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.register("outcomes", outcomes(first, last))
    roads_duckdb.build_road_statistics(con)
    return con


def duckdb_statistics() -> dict[str, list[dict]]:
    parts = [{name: con.sql(sql("prep_" + name)).to_arrow_table() for name in ROAD_PARTIALS}
             for con in (roads(*shoes) for shoes in RANGES)]
    con = duckdb.connect()
    for name in ROAD_PARTIALS:
        con.register(name, merge(MERGED[name], [part[name] for part in parts]))
    return {mart: con.sql(sql(mart)).to_arrow_table().to_pylist()
            for mart in ("road_colours", "road_column_lengths", "road_patterns")}


def polars_statistics() -> dict[str, list[dict]]:
    shuffled = [pl.from_arrow(outcomes(*shoes)).sample(fraction=1.0, shuffle=True, seed=7) for shoes in RANGES]
    parts = [{name: partials_polars.arrow_table(frame.collect())
              for name, frame in partials_polars.road_partials(rounds.lazy()).items()}
             for rounds in shuffled]
    merged = {name: pl.from_arrow(merge(MERGED[name], [part[name] for part in parts])).lazy() for name in ROAD_PARTIALS}
    marts = {"road_colours": marts_polars.road_colours(merged["road_marks"], merged["road_shoes"]),
             "road_column_lengths": marts_polars.road_column_lengths(merged["road_columns"], merged["road_shoes"]),
             "road_patterns": marts_polars.road_patterns(merged["road_conditions"], merged["road_marks"],
                                                          merged["road_shoes"])}
    return {name: frame.collect().to_dicts() for name, frame in marts.items()}


def counted() -> dict[str, Counter]:
    """From the roads of every shoe: marks and column lengths per road; per condition and pattern, the
    entries it was seen before and how many of those were B."""
    con = roads(0, SHOES)
    big = con.sql("SELECT shoe_id, seq, mark FROM big_road ORDER BY shoe_id, seq").fetchall()
    derived = con.sql("SELECT road, shoe_id, entry_seq, mark FROM derived ORDER BY road, shoe_id, seq").fetchall()
    marks = Counter(("big_road", mark) for *_, mark in big)
    marks.update((road, mark) for road, *_, mark in derived)
    # a logical column is a run of one mark in order, within one road of one shoe
    runs = groupby([("big_road", shoe, mark) for shoe, _, mark in big] + [(road, shoe, mark) for road, shoe, _, mark in derived])
    lengths = Counter((road, len(list(run))) for (road, _, _), run in runs)
    seen, banker = Counter(), Counter()
    by_shoe: dict[int, list[str]] = {}
    for shoe, _, mark in big:
        by_shoe.setdefault(shoe, []).append(mark)
    for results in by_shoe.values():
        for i, mark in enumerate(results):
            for k in range(1, min(i, 4) + 1):
                key = (f"last_{k}", "".join(results[i - k:i]))
                seen[key] += 1
                banker[key] += mark == "B"
    for road, shoe, entry_seq, mark in derived:
        if entry_seq + 1 < len(by_shoe[shoe]):
            seen[road, mark] += 1
            banker[road, mark] += by_shoe[shoe][entry_seq + 1] == "B"
    return {"marks": marks, "lengths": lengths, "seen": seen, "banker": banker, "shoes": len(by_shoe)}


@pytest.mark.parametrize("statistics", [duckdb_statistics, polars_statistics], ids=["duckdb", "polars"])
def test_road_statistics_merged_from_ranges_are_the_counts_over_every_shoe(statistics):
    marts, expected = statistics(), counted()
    assert {(row["road"], row["mark"]): row["count"] for row in marts["road_colours"]} == expected["marks"]
    assert {(row["road"], row["length"]): row["columns"] for row in marts["road_column_lengths"]} == expected["lengths"]
    patterns = {(row["condition"], row["pattern"]): row for row in marts["road_patterns"]}
    assert {key: (row["observations"], int(row["next_banker"])) for key, row in patterns.items()} == {
        key: (seen, expected["banker"][key]) for key, seen in expected["seen"].items()}
    b, p = expected["marks"]["big_road", "B"], expected["marks"]["big_road", "P"]
    p0 = b / (b + p)
    for row in patterns.values():
        n, share = row["observations"], int(row["next_banker"]) / row["observations"]
        assert row["p_unconditional"] == pytest.approx(p0, rel=1e-12)
        assert row["z_score"] == pytest.approx((share - p0) / sqrt(p0 * (1 - p0) / n), rel=1e-9)
    for mart in marts.values():
        assert {row["shoes"] for row in mart} == {expected["shoes"]}
    for road in ("big_road", "big_eye_boy"):
        shares = [row["share"] for row in marts["road_colours"] if row["road"] == road]
        assert sum(shares) == pytest.approx(1, rel=1e-12)
