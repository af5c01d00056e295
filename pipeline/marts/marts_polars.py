"""The marts in Polars: the same tables as marts_duckdb.py, written as lazy queries.

pipeline/marts/sql is the specification: every function here mirrors one SQL file (named in
its docstring), step for step, so that both engines give the same rows in the same order
(tests/functional/test_marts_parity.py holds them together). Money stays exact: nets are summed as
decimals and only cast to Float64 where the SQL casts to DOUBLE (means and SDs).
The roads come from roads_polars.py, which mirrors the road_*.sql files.
"""

import polars as pl
import pyarrow as pa

from pipeline.marts import roads_polars
from pipeline.marts.inputs import MARTS, RunInput
from pipeline.marts.partials import (MERGED, OPENING_ROUNDS, RangeFile, RangeRunner, ShoeRange, build_from_partials,
                                     in_process)
from pipeline.schemas import SHOE_TOTALS

HORIZONS = ("round", "shoe", "session_100", "session_1000")
ENTRY_ROADS = ("big_road", *roads_polars.DERIVED_ROADS)
PERCENTILES = {"p01": 1, "p05": 5, "p50": 50, "p95": 95, "p99": 99}  # in % of the sessions
SESSION = pl.Decimal(18, 2)  # prep_session_histogram.sql: CAST(net AS DECIMAL(18, 2))


def _nets(frame: pl.LazyFrame) -> list[str]:
    """The columns DuckDB's COLUMNS('^net_') picks, in the same order."""
    return [name for name in frame.collect_schema().names() if name.startswith("net_")]


def _sum_nets(nets: list[str]) -> list[pl.Expr]:
    return [pl.col(net).sum() for net in nets]


def _order(column: str, values: tuple[str, ...]) -> pl.Expr:
    """list_position([...], column): the sort key of a fixed order."""
    return pl.col(column).replace_strict(list(values), list(range(len(values))), return_dtype=pl.Int64)


def _share(count: str, over: str) -> pl.Expr:
    """count / sum(count) OVER (PARTITION BY over)."""
    return pl.col(count) / pl.col(count).sum().over(over)


def _moments(weight: pl.Expr, total: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """Mean and sample SD of `net` (as DOUBLE) over a weighted histogram, by the SQL's formula:
    sum(w x) / n and sqrt(max((sum(w x x) - sum(w x)^2 / n) / (n - 1), 0)), null when n is 1."""
    x, n = pl.col("net").cast(pl.Float64), total.cast(pl.Float64)
    first, second = (weight * x).sum(), (weight * x * x).sum()
    variance = ((second - first.pow(2) / n) / (n - 1)).clip(lower_bound=0)
    return first / n, pl.when(n > 1).then(variance.sqrt())


# --- prep_*.sql ---------------------------------------------------------------------------------

def shoe_totals(shoes: pl.LazyFrame) -> pl.LazyFrame:
    """prep_shoe_totals.sql: one row per shoe, as the simulator wrote it."""
    return shoes.select("shoe_id", pl.col("rounds").cast(pl.Int64), *SHOE_TOTALS, pl.col("^net_.*$"))


def blocks(rounds: pl.LazyFrame, nets: list[str]) -> pl.LazyFrame:
    """prep_blocks.sql: net totals of consecutive blocks of 100 rounds in run order (run_row)."""
    return (rounds.group_by(block=pl.col("run_row") // 100)
            .agg(rounds=pl.len().cast(pl.Int64), *_sum_nets(nets)))


def round_groups(rounds: pl.LazyFrame, nets: list[str]) -> pl.LazyFrame:
    """prep_round_groups.sql: how many rounds had each outcome, streak index and nets."""
    return rounds.group_by("outcome", "streak_index", *nets).agg(weight=pl.len().cast(pl.Int64))


def round_histogram(groups: pl.LazyFrame, nets: list[str]) -> pl.LazyFrame:
    """prep_round_histogram.sql: how many rounds had each combination of nets."""
    return groups.group_by(nets).agg(weight=pl.col("weight").sum())


def session_histogram(histogram: pl.LazyFrame, totals: pl.LazyFrame, blocks_: pl.LazyFrame,
                      nets: list[str]) -> pl.LazyFrame:
    """prep_session_histogram.sql: net per session, per bet, as a histogram
    (horizon, bet, net, sessions); incomplete sessions of 100 and 1,000 rounds left out."""
    thousands = (blocks_.group_by(block=pl.col("block") // 10)
                 .agg(pl.col("rounds").sum(), *_sum_nets(nets)))

    def horizon(frame: pl.LazyFrame, name: str, weight: pl.Expr) -> pl.LazyFrame:
        return frame.select(pl.lit(name).alias("horizon"), *[pl.col(n).cast(SESSION) for n in nets],
                            weight.cast(pl.Int64).alias("weight"))

    one = pl.lit(1)
    sessions = pl.concat([
        horizon(histogram, "round", pl.col("weight")),
        horizon(totals, "shoe", one),
        horizon(blocks_.filter(pl.col("rounds") == 100), "session_100", one),
        horizon(thousands.filter(pl.col("rounds") == 1000), "session_1000", one),
    ])
    return (sessions.unpivot(on=nets, index=["horizon", "weight"], variable_name="column_name", value_name="net")
            .group_by("horizon", bet=pl.col("column_name").str.slice(4), net=pl.col("net"))
            .agg(sessions=pl.col("weight").sum()))


# --- the marts ----------------------------------------------------------------------------------

def outcome_summary(totals: pl.LazyFrame, exact_outcomes: pl.LazyFrame) -> pl.LazyFrame:
    """outcome_summary.sql"""
    summed = totals.select(rounds=pl.col("rounds").sum(), shoes=pl.len().cast(pl.Int64),
                           B=pl.col("banker_wins").sum(), P=pl.col("player_wins").sum(),
                           T=pl.col("ties").sum())
    counts = summed.unpivot(on=["B", "P", "T"], index=["rounds", "shoes"], variable_name="outcome",
                            value_name="count")
    n, p = pl.col("rounds").cast(pl.Float64), pl.col("probability")
    return (counts.join(exact_outcomes, on="outcome")
            .select("outcome", "rounds", "shoes", "count",
                    share=pl.col("count") / pl.col("rounds"),
                    exact_share=p,
                    z_score=(pl.col("count") - n * p) / (n * p * (1 - p)).sqrt())
            .sort("outcome"))


def bet_performance(sessions: pl.LazyFrame, exact_bets: pl.LazyFrame) -> pl.LazyFrame:
    """bet_performance.sql"""
    weight = pl.col("sessions")
    ev, sd = _moments(weight, weight.sum())
    per_bet = (sessions.filter(pl.col("horizon") == "round").group_by("bet")
               .agg(rounds=weight.sum(), hits=weight.filter(pl.col("net") > 0).sum(),
                    total_net=(weight * pl.col("net")).sum(), ev=ev, sd=sd))
    half_width = 1.96 * pl.col("sd") / pl.col("rounds").cast(pl.Float64).sqrt()
    return (per_bet.join(exact_bets.rename({"ev": "exact_ev", "sd": "exact_sd"}), on="bet")
            .sort("position")
            .select("bet", "rounds", pl.col("hits").fill_null(0), "total_net", "ev",
                    ev_ci_low=pl.col("ev") - half_width, ev_ci_high=pl.col("ev") + half_width,
                    sd="sd", exact_ev="exact_ev", exact_sd="exact_sd",
                    z_score=(pl.col("ev") - pl.col("exact_ev"))
                    / (pl.col("exact_sd") / pl.col("rounds").cast(pl.Float64).sqrt()),
                    player_strategy="player_strategy", banker_strategy="banker_strategy"))


def payout_variance(sessions: pl.LazyFrame) -> pl.LazyFrame:
    """payout_variance.sql. A percentile p is the smallest net with at_or_below >= p/100 of the
    sessions; the SQL compares exact decimals (0.01 * total), so this compares integers:
    100 * at_or_below >= p * total."""
    group = ["horizon", "bet"]
    weight, total, net = pl.col("sessions"), pl.col("total"), pl.col("net")
    cumulative = sessions.with_columns(
        at_or_below=weight.cum_sum().over(group, order_by="net"),  # nets are unique per group
        total=weight.sum().over(group))
    mean, sd = _moments(weight, total.first())
    percentiles = {name: net.filter(100 * pl.col("at_or_below") >= p * total).min()
                   for name, p in PERCENTILES.items()}
    return (cumulative.group_by("bet", "horizon")
            .agg(sessions=total.first(), mean=mean, sd=sd, **percentiles,
                 share_ahead=weight.filter(net > 0).sum() / total.first())
            .sort("bet", _order("horizon", HORIZONS)))


def ev_convergence(opening: pl.LazyFrame, blocks_: pl.LazyFrame, checkpoints: pl.LazyFrame,
                   exact_bets: pl.LazyFrame, nets: list[str]) -> pl.LazyFrame:
    """ev_convergence.sql: running EV at the checkpoints; below 100 rounds from the run's first
    rounds (opening), then from whole blocks, and at the run's last round."""
    running_nets = [pl.col(n).cum_sum() for n in nets]
    first_rounds = (opening.sort("run_row")
                    .select(rounds=pl.col("run_row") + 1, *running_nets)
                    .filter(pl.col("rounds") < 100))
    whole_blocks = (blocks_.filter(pl.col("rounds") == 100).sort("block")
                    .select(rounds=100 * (pl.col("block") + 1), *running_nets))
    last = blocks_.select(pl.col("rounds").sum(), *_sum_nets(nets)).filter(pl.col("rounds") > 0)  # NULL if none
    running = pl.concat([first_rounds, whole_blocks, last], how="diagonal_relaxed")
    at_checkpoints = running.join(checkpoints, on="rounds", how="semi").unique()
    long = at_checkpoints.unpivot(on=nets, index="rounds", variable_name="column_name", value_name="net")
    band = 1.96 * pl.col("sd") / pl.col("rounds").cast(pl.Float64).sqrt()
    return (long.with_columns(bet=pl.col("column_name").str.slice(4)).join(exact_bets, on="bet")
            .sort("position", "rounds")
            .select("bet", "rounds",
                    ev=pl.col("net").cast(pl.Float64) / pl.col("rounds").cast(pl.Float64),
                    exact_ev="ev",
                    exact_band_low=pl.col("ev") - band,
                    exact_band_high=pl.col("ev") + band))


def streaks(groups: pl.LazyFrame, exact_outcomes: pl.LazyFrame) -> pl.LazyFrame:
    """streaks.sql: counts per side and length against the geometric law of independent rounds.
    A streak of length L has one round at each streak_index 0 .. L-1: the rounds at index l-1
    count the streaks of length l or more, and the streaks of length l are the difference."""
    prob = lambda o: pl.col("probability").filter(pl.col("outcome") == o).first()
    p = exact_outcomes.select(B=prob("B"), P=prob("P"), T=prob("T"))
    q = pl.concat([p.select(side=pl.lit("B"), q=pl.col("B") / (pl.col("B") + pl.col("P"))),
                   p.select(side=pl.lit("P"), q=pl.col("P") / (pl.col("B") + pl.col("P"))),
                   p.select(side=pl.lit("T"), q=pl.col("T"))])
    at_least = (groups.group_by(side=pl.col("outcome").cast(pl.String),
                                length=pl.col("streak_index").cast(pl.Int64) + 1)
                .agg(streaks=pl.col("weight").sum()))
    following = pl.col("streaks").shift(-1).over("side", order_by="length").fill_null(0)  # lead()
    counted = at_least.with_columns(streaks=pl.col("streaks") - following)
    return (counted.join(q, on="side")
            .filter(pl.col("streaks") > 0)
            .select("side", "length", "streaks", share=_share("streaks", "side"),
                    expected_share=pl.col("q").pow((pl.col("length") - 1).cast(pl.Float64)) * (1 - pl.col("q")))
            .sort("side", "length"))


def longest_streaks(totals: pl.LazyFrame) -> pl.LazyFrame:
    """longest_streaks.sql: the longest streak of each side per shoe (0: none), over shoes."""
    longest = totals.select(B="longest_banker_streak", P="longest_player_streak", T="longest_tie_streak").unpivot(
        on=["B", "P", "T"], variable_name="side", value_name="longest")
    return (longest.group_by("side", "longest").agg(shoes=pl.len().cast(pl.Int64))
            .with_columns(share=_share("shoes", "side"))
            .sort("side", "longest"))


def shoe_summary(totals: pl.LazyFrame, nets: list[str]) -> pl.LazyFrame:
    """shoe_summary.sql: one row per shoe."""
    return (totals.sort("shoe_id")
            .select("shoe_id", "rounds", "banker_wins", "player_wins", "ties", "naturals",
                    "player_pairs", "banker_pairs", "longest_banker_streak", "longest_player_streak",
                    "big_road_columns", pl.max_horizontal(pl.col("big_road_columns") - 1, 0).alias("chops"),
                    *nets))


def _entries(big_road: pl.LazyFrame, derived: pl.LazyFrame, *columns: str) -> pl.LazyFrame:
    return pl.concat([big_road.select(*columns), derived.select(*columns)])


def _shoes(big_road: pl.LazyFrame) -> pl.LazyFrame:
    """(SELECT count(DISTINCT shoe_id) FROM big_road): the shoes the road statistics cover."""
    return big_road.select(shoes=pl.col("shoe_id").n_unique().cast(pl.Int64))


def road_colours(big_road: pl.LazyFrame, derived: pl.LazyFrame) -> pl.LazyFrame:
    """road_colours.sql"""
    return (_entries(big_road, derived, "road", "mark")
            .group_by("road", "mark").agg(count=pl.len().cast(pl.Int64))
            .join(_shoes(big_road), how="cross")
            .select("road", "mark", "shoes", "count", share=_share("count", "road"))
            .sort(_order("road", ENTRY_ROADS), "mark"))


def road_column_lengths(big_road: pl.LazyFrame, derived: pl.LazyFrame) -> pl.LazyFrame:
    """road_column_lengths.sql"""
    return (_entries(big_road, derived, "road", "shoe_id", "col")
            .group_by("road", "shoe_id", "col").agg(length=pl.len().cast(pl.Int64))
            .group_by("road", "length").agg(columns=pl.len().cast(pl.Int64))
            .join(_shoes(big_road), how="cross")
            .select("road", "length", "shoes", "columns", share=_share("columns", "road"))
            .sort(_order("road", ENTRY_ROADS), "length"))


def road_patterns(big_road: pl.LazyFrame, derived: pl.LazyFrame) -> pl.LazyFrame:
    """road_patterns.sql: P(next big-road result = B | condition) against the share of B.
    Each condition is counted on its own (grouped by the previous marks, the pattern string
    built per group), then the counts are added up by (condition, pattern) as in the SQL."""
    banker = (pl.col("mark") == "B").sum().cast(pl.Int64)
    counts = dict(observations=pl.len().cast(pl.Int64), next_banker=banker)
    # lag(mark, k) OVER (PARTITION BY shoe_id ORDER BY seq), on the rows sorted once
    ordered = big_road.select("shoe_id", "seq", "mark").sort("shoe_id", "seq")
    lags = {f"m{k}": pl.when(pl.col("shoe_id").shift(k) == pl.col("shoe_id")).then(pl.col("mark").shift(k))
            for k in range(1, 5)}
    previous = ordered.with_columns(**lags)
    last = [previous.filter(pl.col(f"m{k}").is_not_null())
            .group_by([f"m{j}" for j in range(k, 0, -1)]).agg(**counts)
            .select(condition=pl.lit(f"last_{k}"),  # oldest first: m_k || ... || m_1
                    pattern=pl.concat_str([pl.col(f"m{j}") for j in range(k, 0, -1)]),
                    **{name: name for name in counts})
            for k in range(1, 5)]
    following = big_road.select("shoe_id", "seq", next_mark="mark")
    by_roads = (derived.select("shoe_id", "road", pattern="mark", seq=pl.col("entry_seq") + 1)
                .join(following, on=["shoe_id", "seq"])
                .group_by("road", "pattern")
                .agg(**counts | {"next_banker": (pl.col("next_mark") == "B").sum().cast(pl.Int64)})
                .select(condition="road", pattern="pattern", **{name: name for name in counts}))
    base = big_road.select(p0=(pl.col("mark") == "B").sum() / pl.len(),
                           shoes=pl.col("shoe_id").n_unique().cast(pl.Int64))
    p, p0, n = pl.col("p_next_banker"), pl.col("p_unconditional"), pl.col("observations")
    return (pl.concat([*last, by_roads])
            .group_by("condition", "pattern").agg(pl.col("observations").sum(), pl.col("next_banker").sum())
            .join(base, how="cross")
            .select("condition", "pattern", "shoes", "observations", "next_banker",
                    p_next_banker=pl.col("next_banker") / n,
                    p_unconditional="p0")
            .with_columns(z_score=(p - p0) / (p0 * (1 - p0) / n).sqrt())
            .sort("condition", "pattern"))


# --- the run ------------------------------------------------------------------------------------

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


def partials(run: RunInput, shoes: ShoeRange, sample_shoes: int) -> dict[str, pa.Table]:
    """The partials of one range of a run's shoes (pipeline/marts/partials.py), as Arrow tables."""
    options = run.out.polars_options()
    rounds = range_scan(shoes.rounds, shoes, options, run_row=True)
    nets = _nets(rounds)
    outcomes = rounds.select("shoe_id", "round", "outcome")
    opening = shoes.opening()
    queries = {
        "shoe_totals": shoe_totals(range_scan(shoes.shoes, shoes, options, run_row=False)),
        "blocks": blocks(rounds, nets),
        "round_groups": round_groups(rounds, nets),
        "opening": (range_scan(opening, shoes, options, run_row=True) if opening else rounds.head(0))
        .filter(pl.col("run_row") < OPENING_ROUNDS).select("run_row", *nets),
        "road_outcomes": outcomes.filter(pl.col("shoe_id") < int(sample_shoes)) if sample_shoes else outcomes,
    }
    # Each scan of every round runs alone on the streaming engine: collected together, queries
    # that share the scan make Polars cache all of it in memory (9.6 GB for a million shoes).
    return {name: arrow_table(query.collect(engine="streaming")) for name, query in queries.items()}


def finals(run: RunInput, merged: dict[str, pa.Table], road_cells_shoes: int, road_stats_shoes: int) -> dict[str, pa.Table]:
    """Every mart of one run from its merged partials, as Arrow tables (before the contract's run_id and
    rules columns). Roads are drawn cell by cell for the first `road_cells_shoes` shoes; the road
    statistics (colours, column lengths, patterns) cover the first `road_stats_shoes` (0: every shoe)."""
    totals, blocks_, groups, opening, outcomes = (pl.from_arrow(merged[name]).lazy() for name in MERGED)
    nets = _nets(blocks_)
    exact_outcomes = pl.from_arrow(run.exact_outcomes()).lazy()
    exact_bets = pl.from_arrow(run.exact_bets()).lazy()
    checkpoints = pl.from_arrow(run.checkpoints()).lazy().select(pl.col("rounds").cast(pl.Int64))
    tables = {"road_cells": roads_polars.road_cells(outcomes.filter(pl.col("shoe_id") < int(road_cells_shoes)))}
    sample = outcomes.filter(pl.col("shoe_id") < int(road_stats_shoes)) if road_stats_shoes else outcomes
    big = roads_polars.big_road(sample).collect().lazy()
    der = roads_polars.derived(big).collect().lazy()
    histogram = round_histogram(groups, nets).collect().lazy()
    sessions = session_histogram(histogram, totals, blocks_, nets).collect().lazy()
    marts = {
        "ev_convergence": ev_convergence(opening, blocks_, checkpoints, exact_bets, nets),
        "outcome_summary": outcome_summary(totals, exact_outcomes),
        "streaks": streaks(groups, exact_outcomes),
        "bet_performance": bet_performance(sessions, exact_bets),
        "payout_variance": payout_variance(sessions),
        "longest_streaks": longest_streaks(totals),
        "shoe_summary": shoe_summary(totals, nets),
        "road_colours": road_colours(big, der),
        "road_column_lengths": road_column_lengths(big, der),
        "road_patterns": road_patterns(big, der),
    }
    tables |= {name: arrow_table(frame) for name, frame in zip(marts, pl.collect_all(list(marts.values())))}
    return {name: tables[name] for name in MARTS}


def build_marts(run: RunInput, road_cells_shoes: int, road_stats_shoes: int = 0, ranges: int = 1,
                run_ranges: RangeRunner = in_process) -> dict[str, pa.Table]:
    """Every mart of one run, from the partials of `ranges` ranges of its shoes (see finals)."""
    return build_from_partials(partials, finals, run, road_cells_shoes, road_stats_shoes, ranges, run_ranges)
