"""The Polars roads (pipeline/marts/roads_polars.py) against the DuckDB roads (roads_duckdb.py and
sql/road_*.sql), plus invariants of the Polars roads on their own."""

import duckdb
import polars as pl
import pytest
from hypothesis import given, settings, strategies as st
from polars.testing import assert_frame_equal
from reference import big_road_places

from pipeline.marts import roads_duckdb, roads_polars

ENTRY_ROADS = ("big_road", *roads_polars.DERIVED_ROADS)
K = {"big_eye_boy": 1, "small_road": 2, "cockroach_pig": 3}


def outcomes(shoes: dict[int, str]) -> pl.DataFrame:
    """outcomes(shoe_id, round, outcome) from {shoe_id: "BPT..."}, rounds numbered from 1."""
    rows = [(shoe, n, outcome) for shoe, results in shoes.items() for n, outcome in enumerate(results, 1)]
    return pl.DataFrame(rows, schema={"shoe_id": pl.Int64, "round": pl.Int32, "outcome": pl.String},
                        orient="row")


def duckdb_roads(frame: pl.DataFrame) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.register("outcomes", frame.to_arrow())
    roads_duckdb.build_roads(con)
    return con


def assert_same_cells(frame: pl.DataFrame) -> pl.DataFrame:
    expected = roads_duckdb.road_cells(duckdb_roads(frame))
    actual = roads_polars.road_cells(frame)
    assert actual.schema == expected.schema
    assert_frame_equal(pl.from_arrow(actual), pl.from_arrow(expected))
    return pl.from_arrow(actual)


# Column 0 has 9 entries (tail on row 5 to draw column 3); then a staircase of 7-long columns,
# each blocked one row higher by the previous tail, down to a tail on the top row that pushes
# the next column's start to draw column 12.
STAIRCASE = "BBBBBBB" "PPPPPPP" "BBBBBBB" "PPPPPPP" "BBBBBBB" "PPPPPPP" "BP" "BBBBBBBBB"
SHOES = {
    "ties before the first result": {1: "TTBPPBT"},
    "ties inside a streak": {1: "BTBTTBBPTPPTB"},
    "dragon tail": {1: "PBBBBBBBBBBPBBBBBBBB"},
    "blocked by an earlier tail": {1: "BBBBBBBBBPPPPPPPPBBBBBBBPBPPPP"},
    "staircase": {1: STAIRCASE},
    "alternating chops": {1: "BPBPBPBPBPBPBPBPBPBPBPBP"},
    "double chops": {1: "BBPPBBPPBBPPBBPPBPPBBPP"},
    "all ties": {1: "TTTT"},
    "single result": {1: "P"},
    "single tie": {1: "T"},
    "several shoes": {7: "BPPBTTBBBBBBBP", 3: "TTT", 11: "PBPBBPPPBTBBPBPBBB", -2: "B"},
    "empty": {},
}


@pytest.mark.parametrize("shoes", SHOES.values(), ids=SHOES.keys())
def test_hand_picked_shoes(shoes):
    assert_same_cells(outcomes(shoes))


def test_empty_input_gives_empty_cells_with_the_same_schema():
    cells = roads_polars.road_cells(outcomes({}))
    assert cells.num_rows == 0
    assert cells.schema == roads_duckdb.road_cells(duckdb_roads(outcomes({}))).schema


def test_row_order_of_the_input_does_not_matter():
    frame = outcomes({5: STAIRCASE, 2: "TBBPTPBBBBBBBBPPB", 9: "PBPBPPT"}).sample(fraction=1.0, shuffle=True, seed=3)
    assert_same_cells(frame)
    assert_frame_equal(pl.from_arrow(roads_polars.road_cells(frame.lazy())),
                       pl.from_arrow(roads_polars.road_cells(frame.sort("shoe_id", "round"))))


def test_same_roads_list():
    assert roads_polars.ROADS == roads_duckdb.ROADS


def test_intermediate_tables_match_duckdb():
    frame = outcomes({1: STAIRCASE + "TBPPBTPBBBPBPBP", 2: "TTBPBPPBBPBPPPPPPPPPPBPB", 3: "TTT"})
    con = duckdb_roads(frame)
    big = roads_polars.big_road(frame.lazy()).collect()
    der = roads_polars.derived(big.lazy()).collect()
    logical = pl.concat([t.select("road", "shoe_id", "seq", "col", "row") for t in (big, der)])
    ours = {"big_road": big, "derived": der, "bead_plate": roads_polars.bead_plate(frame.lazy()).collect(),
            "road_grid": roads_polars.grid(logical)}
    for name, table in ours.items():
        theirs = pl.from_arrow(con.sql(f"SELECT * FROM {name}").to_arrow_table())
        assert_frame_equal(table.sort("road", "shoe_id", "seq"), theirs.sort("road", "shoe_id", "seq"))


shoe = st.text(alphabet="BPT", min_size=0, max_size=120)
# Also random strings over "BPT", built from runs, so that long columns, dragon tails and columns
# blocked by earlier tails (rare in uniform strings) are common.
streaky = st.lists(st.tuples(st.sampled_from("BPT"), st.integers(1, 14)), max_size=16).map(
    lambda runs: "".join(outcome * n for outcome, n in runs)[:120])
shoes = st.dictionaries(st.integers(-(2**40), 2**40), st.one_of(shoe, streaky), min_size=1, max_size=4)
# Building both engines' roads costs about 0.1 s whatever the shoes (DuckDB's connection and SQL, Polars'
# plan), so the parity test takes twice the shoes per example in half the examples: as many shoes checked.
more_shoes = st.dictionaries(st.integers(-(2**40), 2**40), st.one_of(shoe, streaky), min_size=1, max_size=8)


@settings(max_examples=30, deadline=None)
@given(more_shoes)
def test_parity_random_shoes(shoes):
    assert_same_cells(outcomes(shoes))


def placed(frame: pl.DataFrame) -> pl.DataFrame:
    """outcomes with each round's place on the big road, as the rounds carry it (reference.big_road_places)."""
    by_shoe = frame.sort("shoe_id", "round").partition_by("shoe_id", maintain_order=True)
    places = [place for shoe in by_shoe for place in big_road_places("".join(shoe["outcome"]))]
    return frame.sort("shoe_id", "round").with_columns(
        big_road_column=pl.Series([column for column, _ in places], dtype=pl.Int16),
        streak_index=pl.Series([index for _, index in places], dtype=pl.Int16))


@settings(max_examples=60, deadline=None)
@given(shoes)
def test_the_big_road_from_the_rounds_places_is_the_big_road_of_their_outcomes(shoes):
    frame = placed(outcomes(shoes))
    con = duckdb_roads(frame)
    expected = pl.from_arrow(con.sql("SELECT road, shoe_id, seq, round, mark, col, row FROM big_road").to_arrow_table())
    roads_duckdb.build_road_statistics(con)
    from_duckdb = pl.from_arrow(con.sql("FROM big_road").to_arrow_table())
    from_polars = roads_polars.placed_big_road(frame.lazy()).collect()
    key = ["shoe_id", "seq"]
    for ours in (from_duckdb, from_polars):
        assert_frame_equal(ours.sort(key), expected.sort(key), check_dtypes=False)
    assert from_polars.schema == from_duckdb.schema


@settings(max_examples=60, deadline=None)
@given(shoes)
def test_polars_road_invariants(shoes):
    frame = outcomes(shoes)
    cells = pl.from_arrow(roads_polars.road_cells(frame))
    big = roads_polars.big_road(frame.lazy()).collect()

    # The grid never draws two entries of one road of one shoe in the same cell, on 6 rows.
    assert not cells.select("shoe_id", "road", "draw_col", "draw_row").is_duplicated().any()
    assert cells["draw_row"].is_between(0, 5).all()

    # Drawn like a road: a column starts on the top row; each next entry lies directly below the
    # previous one or, once turned (dragon tail), directly right of it on the same row.
    drawn = cells.filter(pl.col("road") != "bead_plate").sort("shoe_id", "road", "seq").with_columns(
        dc=pl.col("draw_col").diff().over("shoe_id", "road", "col"),
        dr=pl.col("draw_row").diff().over("shoe_id", "road", "col"))
    assert (drawn.filter(pl.col("row") == 0)["draw_row"] == 0).all()
    steps = drawn.filter(pl.col("row") >= 1).with_columns(
        turned=(pl.col("dc") == 1).cum_sum().over("shoe_id", "road", "col") > 0)
    assert (((steps["dc"] == 0) & (steps["dr"] == 1) & ~steps["turned"])
            | ((steps["dc"] == 1) & (steps["dr"] == 0))).all()

    for shoe_id, results in shoes.items():
        of_shoe = cells.filter(pl.col("shoe_id") == shoe_id)
        # The bead plate keeps every round, in order.
        assert "".join(of_shoe.filter(pl.col("road") == "bead_plate")["mark"]) == results
        # The big road has an entry per non-tie, ties counted on entries.
        entries = of_shoe.filter(pl.col("road") == "big_road")
        assert entries.height == len(results) - results.count("T")
        if entries.height:
            assert entries["ties"].sum() + entries.height == len(results)
        # A derived road has one mark per big-road entry after its start.
        col, row = big.filter(pl.col("shoe_id") == shoe_id)["col"], big.filter(pl.col("shoe_id") == shoe_id)["row"]
        for road, k in K.items():
            marked = ((row == 0) & (col >= k + 1)) | ((row >= 1) & (col >= k))
            assert of_shoe.filter(pl.col("road") == road).height == marked.sum()
            assert of_shoe.filter(pl.col("road") == road)["mark"].is_in(["red", "blue"]).all()
