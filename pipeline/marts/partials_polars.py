"""The marts' partials in Polars over one range of a run's shoes (pipeline/marts/partials.py), as lazy
queries that mirror the prep_*.sql files step for step, as marts_polars.py mirrors the final ones; and
the range's file of each mart the range tasks write."""

import polars as pl
import pyarrow as pa

from pipeline.marts import roads_polars
from pipeline.marts.inputs import RunInput
from pipeline.marts.partials import OPENING_ROUNDS, RangeFile, ShoeRange
from pipeline.marts.publish import write_part
from pipeline.schemas import SHOE_TOTALS

SESSION = pl.Decimal(18, 2)  # prep_sessions.sql: CAST(net AS DECIMAL(18, 2))
SIZES = (100, 1000)  # prep_blocks.sql: rounds per block
PLACED = ("big_road_column", "streak_index")  # each round's place on the big road (road_big_road_placed.sql)


def nets_of(frame: pl.LazyFrame) -> list[str]:
    """The columns DuckDB's COLUMNS('^net_') picks, in the same order."""
    return [name for name in frame.collect_schema().names() if name.startswith("net_")]


def sum_nets(nets: list[str]) -> list[pl.Expr]:
    return [pl.col(net).sum() for net in nets]


def session_horizon(size: pl.Expr) -> pl.Expr:
    """'session_' || size"""
    return pl.concat_str(pl.lit("session_"), size.cast(pl.String)).alias("horizon")


def blocks(rounds: pl.LazyFrame, nets: list[str]) -> pl.LazyFrame:
    """prep_blocks.sql: net totals of blocks of 100 and 1,000 rounds in run order (run_row)."""
    # run_row ascends (range_scan), and so does the block: flagged sorted, the grouping takes half the time
    block = (pl.col("run_row") // 100).set_sorted()
    hundreds = rounds.with_columns(block=block).group_by("block").agg(rounds=pl.len().cast(pl.Int64), *sum_nets(nets))
    thousands = hundreds.group_by(block=pl.col("block") // 10).agg(pl.col("rounds").sum(), *sum_nets(nets))
    return pl.concat([frame.select(size=pl.lit(size, pl.Int32), block="block", rounds="rounds", *nets)
                      for size, frame in zip(SIZES, (hundreds, thousands))])


def round_groups(rounds: pl.LazyFrame, nets: list[str]) -> pl.LazyFrame:
    """prep_round_groups.sql: how many rounds had each outcome, streak index and nets."""
    return rounds.group_by("outcome", "streak_index", *nets).agg(weight=pl.len().cast(pl.Int64))


def outcome_totals(shoes: pl.LazyFrame) -> pl.LazyFrame:
    """prep_outcome_totals.sql: the range's rounds, shoes and wins of each side, in one row."""
    return shoes.select(rounds=pl.col("rounds").cast(pl.Int64).sum(), shoes=pl.len().cast(pl.Int64),
                        **{side: pl.col(side).cast(pl.Int64).sum() for side in ("banker_wins", "player_wins", "ties")})


def longest_counts(shoes: pl.LazyFrame) -> pl.LazyFrame:
    """prep_longest_counts.sql: shoes per side and longest streak (0: none)."""
    longest = shoes.select(B="longest_banker_streak", P="longest_player_streak", T="longest_tie_streak").unpivot(
        on=["B", "P", "T"], variable_name="side", value_name="longest")
    return longest.group_by("side", "longest").agg(shoes=pl.len().cast(pl.Int64))


def sessions(shoes: pl.LazyFrame, blocks_: pl.LazyFrame, nets: list[str]) -> pl.LazyFrame:
    """prep_sessions.sql: net per shoe and per session wholly inside the range, per bet, as a histogram.
    Counted by size (0: a shoe) and net, bet by bet, the labels put on the counts: a third of the time."""
    whole = blocks_.filter(pl.col("rounds") == pl.col("size")).select("size", *nets)
    completed = pl.concat([shoes.select(pl.lit(0, pl.Int32).alias("size"), *nets), whole], how="vertical_relaxed")
    counted = pl.concat([completed.group_by("size", net).agg(sessions=pl.len().cast(pl.Int64))
                         .select("size", bet=pl.lit(net.removeprefix("net_")), net=pl.col(net).cast(SESSION),
                                 sessions="sessions") for net in nets])
    horizon = pl.when(pl.col("size") == 0).then(pl.lit("shoe")).otherwise(session_horizon(pl.col("size")))
    return counted.select(horizon.alias("horizon"), "bet", "net", "sessions")


def session_edges(blocks_: pl.LazyFrame, nets: list[str]) -> pl.LazyFrame:
    """prep_session_edges.sql: the blocks not wholly inside the range."""
    return blocks_.filter(pl.col("rounds") < pl.col("size")).select("size", "block", "rounds", *nets)


def running_nets(blocks_: pl.LazyFrame, checkpoints: pl.LazyFrame, nets: list[str]) -> pl.LazyFrame:
    """prep_running_nets.sql: the range's rounds and nets before each checkpoint of 100 rounds or more:
    the running totals of its blocks of 100 at the last block starting before the checkpoint
    (100 * block < checkpoint), none for a checkpoint before the range."""
    later = checkpoints.filter(pl.col("rounds") >= 100).select(checkpoint=pl.col("rounds").cast(pl.Int64))
    last_blocks = later.with_columns(block=(pl.col("checkpoint") - 1) // 100).sort("block")
    running = (blocks_.filter(pl.col("size") == 100).sort("block")
               .select("block", pl.col("rounds").cum_sum(), *[pl.col(net).cum_sum() for net in nets]))
    return (last_blocks.join_asof(running, on="block", strategy="backward").drop_nulls("rounds")
            .select("checkpoint", "rounds", *nets))


def shoe_summary(shoes: pl.LazyFrame, nets: list[str]) -> pl.LazyFrame:
    """shoe_summary.sql: one row per shoe."""
    return (shoes.sort("shoe_id")
            .select("shoe_id", pl.col("rounds").cast(pl.Int64), "banker_wins", "player_wins", "ties", "naturals",
                    "player_pairs", "banker_pairs", "longest_banker_streak", "longest_player_streak",
                    "big_road_columns", pl.max_horizontal(pl.col("big_road_columns") - 1, 0).alias("chops"),
                    *nets))


def _entries(big_road: pl.LazyFrame, derived: pl.LazyFrame, *columns: str) -> pl.LazyFrame:
    return pl.concat([big_road.select(*columns), derived.select(*columns)])


def column_lengths(big_road: pl.LazyFrame, derived: pl.LazyFrame) -> pl.LazyFrame:
    """prep_road_columns.sql: how many logical columns of each length each road has; a derived road's
    columns are its runs of one colour in seq order (`derived` as roads_polars.derived_marks gives it,
    road after road in shoe and seq order: a run starts where the mark, the shoe or the road changes,
    and lasts until the next run starts)."""
    starts = roads_polars.run_starts("mark", "shoe_id", "road")
    first_rows = pl.int_range(pl.len()).filter(starts)
    runs = derived.select(pl.col("road").filter(starts), length=first_rows.shift(-1).fill_null(pl.len()) - first_rows)
    columns = pl.concat([big_road.group_by("road", "shoe_id", "col").agg(length=pl.len()).select("road", "length"),
                         runs.select("road", pl.col("length").cast(pl.get_index_type()))])
    return columns.group_by("road", pl.col("length").cast(pl.Int64)).agg(columns=pl.len().cast(pl.Int64))


def road_conditions(big_road: pl.LazyFrame, derived: pl.LazyFrame) -> pl.LazyFrame:
    """prep_road_conditions.sql. Each condition is counted on its own (grouped by the previous results as
    booleans, B or not, the pattern string built per group), then the counts are added up by (condition,
    pattern) as in the SQL."""
    counts = dict(observations=pl.len().cast(pl.Int64), next_banker=pl.col("banker").sum().cast(pl.Int64))
    # lag(mark, k) OVER (PARTITION BY shoe_id ORDER BY seq), B or not, on the rows sorted once
    ordered = big_road.select("shoe_id", "seq", banker=pl.col("mark") == "B").sort("shoe_id", "seq")
    lags = {f"m{k}": pl.when(roads_polars.same_shoe(k)).then(pl.col("banker").shift(k)) for k in range(1, 5)}
    previous = ordered.with_columns(**lags)
    last = [previous.filter(pl.col(f"m{k}").is_not_null())
            .group_by([f"m{j}" for j in range(k, 0, -1)]).agg(**counts)
            .select(condition=pl.lit(f"last_{k}"),  # oldest first: m_k || ... || m_1
                    pattern=pl.concat_str([_side(f"m{j}") for j in range(k, 0, -1)]),
                    **{name: name for name in counts})
            for k in range(1, 5)]
    by_roads = (derived.filter(pl.col("next_mark").is_not_null())
                .group_by("road", "mark")
                .agg(observations=pl.len().cast(pl.Int64), next_banker=(pl.col("next_mark") == "B").sum().cast(pl.Int64))
                .select(condition="road", pattern="mark", **{name: name for name in counts}))
    return pl.concat([*last, by_roads]).group_by("condition", "pattern").agg(
        pl.col("observations").sum(), pl.col("next_banker").sum())


def _side(banker: str) -> pl.Expr:
    """The big road's mark of a result that was B (`banker` true) or not."""
    return pl.when(pl.col(banker)).then(pl.lit("B")).otherwise(pl.lit("P"))


def road_partials(outcomes: pl.LazyFrame) -> dict[str, pl.LazyFrame]:
    """prep_road_shoes.sql, prep_road_marks.sql, prep_road_columns.sql and prep_road_conditions.sql over
    the roads of `outcomes` (shoe_id, round, outcome, big_road_column, streak_index: rounds, which carry
    their place on the big road)."""
    big = roads_polars.placed_big_road(outcomes).collect().lazy()
    der = roads_polars.derived_marks(big).collect().lazy()
    return {"road_shoes": big.select(shoes=pl.col("shoe_id").n_unique().cast(pl.Int64)),
            "road_marks": _entries(big, der, "road", "mark").group_by("road", "mark").agg(count=pl.len().cast(pl.Int64)),
            "road_columns": column_lengths(big, der),
            "road_conditions": road_conditions(big, der)}


def arrow_table(frame: pl.DataFrame) -> pa.Table:
    """Arrow, with plain strings (as DuckDB gives) rather than Polars' large strings."""
    table = frame.to_arrow()
    schema = pa.schema([pa.field(f.name, pa.string()) if pa.types.is_large_string(f.type)
                        or pa.types.is_string_view(f.type) else f for f in table.schema])
    return table.cast(schema)


def range_scan(files: tuple[RangeFile, ...], shoes: ShoeRange, options, run_row: bool) -> pl.LazyFrame:
    """The rows of `files` for the range's shoes; with run_row, each round's place in the run from 0
    (as range_views.rounds_views on a local OUT: the files are in shoe order, the runs row counts their rows)."""
    frames = []
    for file in files:
        index = {"row_index_name": "run_row", "row_index_offset": file.offset} if run_row else {}
        frame = pl.scan_parquet(file.path, hive_partitioning=False, storage_options=options, **index)
        if run_row:
            frame = frame.with_columns(pl.col("run_row").cast(pl.Int64))
        frames.append(frame if file.whole else frame.filter(pl.col("shoe_id").is_between(shoes.first, shoes.last - 1)))
    return pl.concat(frames)


def _first_shoes(outcomes: pl.LazyFrame, first_shoes: int) -> pl.LazyFrame:
    """The outcomes of the run's first `first_shoes` shoes (0: every shoe)."""
    return outcomes.filter(pl.col("shoe_id") < int(first_shoes)) if first_shoes else outcomes


def partials(run: RunInput, shoes: ShoeRange, road_cells_shoes: int, road_stats_shoes: int) -> dict[str, pa.Table]:
    """The partials of one range of a run's shoes (pipeline/marts/partials.py), as Arrow tables, the roads'
    over its shoes among the first `road_stats_shoes` (0: every shoe); the outcomes of its shoes among the
    first `road_cells_shoes`; writes its file of shoe_summary (publish.PER_SHOE_MARTS)."""
    options = run.out.polars_options()
    rounds = range_scan(shoes.rounds, shoes, options, run_row=True)
    shoe_rows = range_scan(shoes.shoes, shoes, options, run_row=False).select(
        "shoe_id", "rounds", *SHOE_TOTALS, pl.col("^net_.*$")).collect().lazy()
    nets = nets_of(rounds)
    blocks_ = blocks(rounds, nets).collect(engine="streaming").lazy()
    outcomes = rounds.select("shoe_id", "round", "outcome")
    opening = shoes.opening()
    queries = {
        "outcome_totals": outcome_totals(shoe_rows),
        "longest_counts": longest_counts(shoe_rows),
        "sessions": sessions(shoe_rows, blocks_, nets),
        "session_edges": session_edges(blocks_, nets),
        "running_nets": running_nets(blocks_, pl.from_arrow(run.checkpoints()).lazy(), nets),
        "round_groups": round_groups(rounds, nets),
        "opening": (range_scan(opening, shoes, options, run_row=True) if opening else rounds.head(0))
        .filter(pl.col("run_row") < OPENING_ROUNDS).select("run_row", *nets),
        "road_outcomes": _first_shoes(outcomes, road_cells_shoes),
        **road_partials(_first_shoes(rounds.select("shoe_id", "round", "outcome", *PLACED), road_stats_shoes)),
    }
    # Each scan of every round runs alone on the streaming engine: collected together, queries
    # that share the scan make Polars cache all of it in memory (9.6 GB for a million shoes).
    tables = {name: arrow_table(query.collect(engine="streaming")) for name, query in queries.items()
              if name not in run.counted_partials}
    summary = arrow_table(shoe_summary(shoe_rows, nets).collect())
    return tables | {"shoe_summary": write_part(run, "shoe_summary", summary, shoes.file_name())}
