"""The five roads as Polars expressions, for any frame of outcomes(shoe_id, round, outcome).

The rules live in the comments of pipeline/marts/sql/road_*.sql (the DuckDB implementation,
roads_duckdb.py); every function here mirrors one of those files, step for step, and
produces the same tables (tests/unit/test_roads_parity.py holds the two engines together).
"""

from functools import reduce

import polars as pl
import pyarrow as pa

ROADS = ("bead_plate", "big_road", "big_eye_boy", "small_road", "cockroach_pig")
DERIVED_ROADS = ROADS[2:]
ROWS = 6
CELLS = pa.schema([("road", pa.string()), ("shoe_id", pa.int64()), ("seq", pa.int32()),
                   ("col", pa.int32()), ("row", pa.int32()), ("draw_col", pa.int32()),
                   ("draw_row", pa.int32()), ("mark", pa.string()), ("ties", pa.int32())])
ROAD = ["road", "shoe_id"]


def _logical(marks: pl.LazyFrame) -> pl.LazyFrame:
    """road_logical.sql: a new column whenever the mark changes; `row` is the entry's seq minus
    the seq that started its column, both from one pass over each road of each shoe."""
    starts = pl.col("mark").ne_missing(pl.col("mark").shift())
    seq = pl.col("seq")
    return (marks.with_columns(col=(starts.cast(pl.Int32).cum_sum() - 1).over(ROAD, order_by="seq"),
                               column_start=pl.when(starts).then(seq).forward_fill().over(ROAD, order_by="seq"))
            .with_columns(row=(seq - pl.col("column_start")).cast(pl.Int32))
            .drop("column_start"))


def big_road(outcomes: pl.LazyFrame) -> pl.LazyFrame:
    """road_big_road.sql then road_logical.sql: one entry per non-tie round, ties counted on
    the entry before them (or on the first entry)."""
    won = (pl.col("outcome") != "T").cast(pl.Int32)
    numbered = outcomes.with_columns(pl.col("shoe_id").cast(pl.Int64),
                                     seq=won.cum_sum().over("shoe_id", order_by="round") - 1)
    ties = (numbered.filter(pl.col("outcome") == "T")
            .group_by("shoe_id", pl.max_horizontal("seq", 0).cast(pl.Int32).alias("seq"))
            .agg(ties=pl.len().cast(pl.Int32)))
    entries = (numbered.filter(pl.col("outcome") != "T").join(ties, on=["shoe_id", "seq"], how="left")
               .select(pl.lit("big_road", pl.String).alias("road"), "shoe_id", "seq", "round",
                       pl.col("outcome").cast(pl.String).alias("mark"), pl.col("ties").fill_null(0)))
    return _logical(entries)


def derived(big_road: pl.LazyFrame) -> pl.LazyFrame:
    """road_derived.sql then road_logical.sql: big eye boy, small road, cockroach pig (k = 1, 2, 3)."""
    return _logical(derived_marks(big_road))


def run_starts(*keys: str) -> pl.Expr:
    """Whether a row starts a run of rows of equal `keys` (the first row does)."""
    return pl.any_horizontal(pl.col(key) != pl.col(key).shift() for key in keys).fill_null(True)


def _first_row_of_run(*keys: str) -> pl.Expr:
    """The index of the first row of each row's run of equal `keys`."""
    return pl.when(run_starts(*keys)).then(pl.int_range(pl.len())).forward_fill()


def placed_big_road(outcomes: pl.LazyFrame) -> pl.LazyFrame:
    """road_big_road_placed.sql: the big road of rounds that carry their place on it (big_road_column,
    streak_index), but for the ties; `seq` its column's first seq plus its row. Sorted by shoe and column,
    a column's first seq is how many rows of its shoe come before the column's first row."""
    entries = outcomes.filter(pl.col("outcome") != "T").select(
        pl.col("shoe_id").cast(pl.Int64), "round", mark=pl.col("outcome").cast(pl.String),
        col=pl.col("big_road_column").cast(pl.Int32), row=pl.col("streak_index").cast(pl.Int32)).sort("shoe_id", "col")
    first_seq = (_first_row_of_run("shoe_id", "col") - _first_row_of_run("shoe_id")).cast(pl.Int32)
    return entries.select(pl.lit("big_road", pl.String).alias("road"), "shoe_id", seq=first_seq + pl.col("row"),
                          round="round", mark="mark", col="col", row="row")


def _behind(big_road: pl.LazyFrame) -> pl.LazyFrame:
    """road_derived.sql's `behind`: per column c, its length l0, the lengths l1..l4 of columns c-1..c-4 of
    the same shoe (null if none), whether it is the shoe's last, and start1..start3, the seq after the
    first entry of columns 1..3 (null if none). The lags and the last column are shifts of the columns
    sorted by shoe and column."""
    lengths = (big_road.group_by("shoe_id", "col").agg(length=pl.len().cast(pl.Int32), first_seq=pl.col("seq").min())
               .sort("shoe_id", "col"))
    back = [pl.when(same_shoe(n)).then(pl.col("length").shift(n)).alias(f"l{n}") for n in range(1, 5)]
    starts = [(pl.col("first_seq").filter(pl.col("col") == k).min() + 1).over("shoe_id").alias(f"start{k}")
              for k in (1, 2, 3)]
    last_column = (~same_shoe(-1)).fill_null(True).alias("last_column")
    return lengths.select("shoe_id", "col", pl.col("length").alias("l0"), last_column, *back, *starts)


def same_shoe(rows_back: int) -> pl.Expr:
    """Whether the row `rows_back` rows before (after, when negative) is of the same shoe: null past the
    frame's edge."""
    return pl.col("shoe_id").shift(rows_back) == pl.col("shoe_id")


def derived_marks(big_road: pl.LazyFrame) -> pl.LazyFrame:
    """road_derived.sql: the marks of big eye boy, small road and cockroach pig (k = 1, 2, 3), each with the
    big road's next result (next_mark); road after road, each in shoe and seq order."""
    entries = (big_road.select("shoe_id", "seq", "col", "row", "mark").sort("shoe_id", "seq")
               .join(_behind(big_road), on=["shoe_id", "col"], maintain_order="left"))
    row, entry_mark = pl.col("row"), pl.col("mark")
    next_mark = (pl.when(row + 1 < pl.col("l0")).then(entry_mark)
                 .when(~pl.col("last_column")).then(pl.when(entry_mark == "B").then(pl.lit("P")).otherwise(pl.lit("B"))))

    def marks(road: str, k: int) -> pl.LazyFrame:
        first_entry = pl.col(f"start{k}")
        mark = (pl.when(row == 0).then(pl.when(pl.col("l1") == pl.col(f"l{k + 1}")).then(pl.lit("red"))
                                       .otherwise(pl.lit("blue")))
                .when(pl.col(f"l{k}") == row).then(pl.lit("blue"))
                .otherwise(pl.lit("red")))
        return entries.filter(pl.col("seq") >= first_entry).select(
            pl.lit(road, pl.String).alias("road"), "shoe_id", (pl.col("seq") - first_entry).cast(pl.Int32).alias("seq"),
            entry_seq="seq", mark=mark, next_mark=next_mark)

    return pl.concat([marks(road, k) for road, k in zip(DERIVED_ROADS, (1, 2, 3))])


def bead_plate(outcomes: pl.LazyFrame) -> pl.LazyFrame:
    """road_bead_plate.sql: every round in order, ties included."""
    return outcomes.select(
        pl.lit("bead_plate", pl.String).alias("road"), pl.col("shoe_id").cast(pl.Int64),
        pl.int_range(pl.len(), dtype=pl.Int32).over("shoe_id", order_by="round").alias("seq"),
        "round", pl.col("outcome").cast(pl.String).alias("mark"))


_START, _LENGTH, _DEPTH = pl.col("start"), pl.col("length"), pl.col("depth")
# road_grid.sql's lateral subqueries: the start of the next column, how deep it can go (blocked
# by the first earlier tail reaching its start), and the tails t0..t5 once it is placed.
_NEXT_START = pl.max_horizontal(_START + 1, pl.col("t0") + 1).alias("start")
_NEXT_DEPTH = reduce(lambda when, r: when.when(pl.col(f"t{r}") >= _START).then(r), range(2, ROWS),
                     pl.when(pl.col("t1") >= _START).then(1)).otherwise(ROWS).cast(pl.Int64).alias("depth")
_NEXT_TAILS = [pl.when((_DEPTH == r + 1) & (_LENGTH > r + 1)).then(_START + _LENGTH - (r + 1))
               .otherwise(pl.col(f"t{r}")).alias(f"t{r}") for r in range(ROWS)]


def _next_column(placed: pl.DataFrame, column: pl.DataFrame) -> pl.DataFrame:
    """One step of road_grid.sql's recursive CTE, for every (road, shoe) that has this column."""
    return (placed.drop("col", "length").join(column, on=ROAD)
            .with_columns(_NEXT_START).with_columns(_NEXT_DEPTH).with_columns(_NEXT_TAILS))


def grid(logical: pl.DataFrame) -> pl.DataFrame:
    """road_grid.sql: the drawing position (draw_col, draw_row) of every entry of `logical`
    (road, shoe_id, seq, col, row), column by column for all roads and shoes at once."""
    lengths = logical.group_by(*ROAD, "col").agg(length=pl.len().cast(pl.Int64))
    columns = lengths.partition_by("col", as_dict=True)
    placed = lengths.filter(pl.col("col") == 0).with_columns(
        start=pl.lit(0, pl.Int64), depth=pl.lit(ROWS, pl.Int64),
        **{f"t{r}": pl.lit(-1, pl.Int64) for r in range(ROWS - 1)},
        t5=pl.when(_LENGTH > ROWS).then(_LENGTH - ROWS).otherwise(-1))
    steps = [placed.select(*ROAD, "col", "start", "depth")]
    for col in range(1, (logical["col"].max() or 0) + 1):
        placed = _next_column(placed, columns[(col,)])
        steps.append(placed.select(*ROAD, "col", "start", "depth"))
    placed = pl.concat(steps)
    row = pl.col("row")
    return logical.join(placed, on=[*ROAD, "col"]).select(
        *ROAD, "seq",
        pl.when(row < _DEPTH).then(_START).otherwise(_START + row - _DEPTH + 1).cast(pl.Int32).alias("draw_col"),
        pl.min_horizontal(row, _DEPTH - 1).cast(pl.Int32).alias("draw_row"))


def road_cells(outcomes: pl.LazyFrame | pl.DataFrame) -> pa.Table:
    """Every cell of the five roads, in roads_duckdb.road_cells's schema and order."""
    outcomes = outcomes.lazy()
    big = big_road(outcomes).collect()
    lines = pl.concat([big.select(*ROAD, "seq", "col", "row", "mark", "ties"),
                       derived(big.lazy()).collect()
                       .select(*ROAD, "seq", "col", "row", "mark", pl.lit(None, pl.Int32).alias("ties"))])
    positions = grid(lines.select(*ROAD, "seq", "col", "row"))
    beads = bead_plate(outcomes).collect().select(
        *ROAD, "seq", col=pl.col("seq") // ROWS, row=pl.col("seq") % ROWS, draw_col=pl.col("seq") // ROWS,
        draw_row=pl.col("seq") % ROWS, mark="mark", ties=pl.lit(0, pl.Int32))
    lines = lines.join(positions, on=[*ROAD, "seq"]).select(beads.columns).with_columns(pl.col("ties").fill_null(0))
    order = pl.col("road").replace_strict(ROADS, list(range(len(ROADS))), return_dtype=pl.Int32)
    return pl.concat([beads, lines]).sort("shoe_id", order, "seq").to_arrow().cast(CELLS)
