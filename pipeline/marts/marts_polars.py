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
from pipeline.marts.partials import Family, marts_family
from pipeline.marts.partials_polars import SESSION, arrow_table, nets_of, partials, session_horizon
from pipeline.marts.publish import PER_SHOE_MARTS

HORIZONS = ("round", "shoe", "session_100", "session_1000")
ENTRY_ROADS = ("big_road", *roads_polars.DERIVED_ROADS)
PERCENTILES = {"p01": 1, "p05": 5, "p50": 50, "p95": 95, "p99": 99}  # in % of the sessions


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


def round_histogram(groups: pl.LazyFrame, nets: list[str]) -> pl.LazyFrame:
    """prep_round_histogram.sql: how many rounds had each combination of nets."""
    return groups.group_by(nets).agg(weight=pl.col("weight").sum())


def session_histogram(histogram: pl.LazyFrame, sessions_: pl.LazyFrame, edges: pl.LazyFrame,
                      nets: list[str]) -> pl.LazyFrame:
    """prep_session_histogram.sql: net per session, per bet, as a histogram (horizon, bet, net,
    sessions): the ranges' merged histogram and the blocks across their edges the merge completed."""
    completed = pl.concat([
        histogram.select(horizon=pl.lit("round"), *nets, weight=pl.col("weight").cast(pl.Int64)),
        edges.filter(pl.col("rounds") == pl.col("size"))
        .select(session_horizon(pl.col("size")), *nets, weight=pl.lit(1, pl.Int64)),
    ], how="diagonal_relaxed")
    long = (completed.unpivot(on=nets, index=["horizon", "weight"], variable_name="column_name", value_name="net")
            .select("horizon", bet=pl.col("column_name").str.slice(4), net=pl.col("net").cast(SESSION),
                    weight="weight"))
    return (pl.concat([long, sessions_.select("horizon", "bet", "net", weight="sessions")])
            .group_by("horizon", "bet", "net").agg(sessions=pl.col("weight").sum()))


# --- the marts ----------------------------------------------------------------------------------

def outcome_summary(totals: pl.LazyFrame, exact_outcomes: pl.LazyFrame) -> pl.LazyFrame:
    """outcome_summary.sql"""
    summed = totals.select(rounds=pl.col("rounds").sum(), shoes=pl.col("shoes").sum().cast(pl.Int64),
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


def ev_convergence(opening: pl.LazyFrame, running_nets: pl.LazyFrame, checkpoints: pl.LazyFrame,
                   exact_bets: pl.LazyFrame, nets: list[str]) -> pl.LazyFrame:
    """ev_convergence.sql: running EV at the checkpoints; below 100 rounds from the run's first
    rounds (opening), then from the ranges' merged nets before each checkpoint."""
    first_rounds = (opening.sort("run_row")
                    .select(rounds=pl.col("run_row") + 1, *[pl.col(n).cum_sum() for n in nets])
                    .filter(pl.col("rounds") < 100))
    running = pl.concat([first_rounds, running_nets.select(rounds="checkpoint", *nets)], how="diagonal_relaxed")
    at_checkpoints = running.join(checkpoints, on="rounds", how="semi")
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


def longest_streaks(counts: pl.LazyFrame) -> pl.LazyFrame:
    """longest_streaks.sql: the longest streak of each side per shoe (0: none), over shoes."""
    return counts.select("side", "longest", "shoes", share=_share("shoes", "side")).sort("side", "longest")


def road_colours(marks: pl.LazyFrame, shoes: pl.LazyFrame) -> pl.LazyFrame:
    """road_colours.sql"""
    return (marks.join(shoes, how="cross")
            .select("road", "mark", "shoes", "count", share=_share("count", "road"))
            .sort(_order("road", ENTRY_ROADS), "mark"))


def road_column_lengths(columns: pl.LazyFrame, shoes: pl.LazyFrame) -> pl.LazyFrame:
    """road_column_lengths.sql"""
    return (columns.join(shoes, how="cross")
            .select("road", "length", "shoes", "columns", share=_share("columns", "road"))
            .sort(_order("road", ENTRY_ROADS), "length"))


def road_patterns(conditions: pl.LazyFrame, marks: pl.LazyFrame, shoes: pl.LazyFrame) -> pl.LazyFrame:
    """road_patterns.sql: P(next big-road result = B | condition) against the share of B."""
    count = pl.col("count")
    base = (marks.filter(pl.col("road") == "big_road")
            .select(p0=count.filter(pl.col("mark") == "B").sum() / count.sum())
            .join(shoes, how="cross"))
    p, p0, n = pl.col("p_next_banker"), pl.col("p_unconditional"), pl.col("observations")
    return (conditions.join(base, how="cross")
            .select("condition", "pattern", "shoes", "observations", "next_banker",
                    p_next_banker=pl.col("next_banker") / n,
                    p_unconditional="p0")
            .with_columns(z_score=(p - p0) / (p0 * (1 - p0) / n).sqrt())
            .sort("condition", "pattern"))


# --- the run ------------------------------------------------------------------------------------

def finals(run: RunInput, merged: dict[str, pa.Table]) -> dict[str, pa.Table]:
    """Every mart of one run but those its range tasks wrote (PER_SHOE_MARTS) from its merged partials,
    as Arrow tables (before the contract's run_id and rules columns); road_cells from the road outcomes."""
    frames = {name: pl.from_arrow(table).lazy() for name, table in merged.items()}
    groups, road_shoes = frames["round_groups"], frames["road_shoes"]
    nets = nets_of(frames["session_edges"])
    exact_outcomes = pl.from_arrow(run.exact_outcomes()).lazy()
    exact_bets = pl.from_arrow(run.exact_bets()).lazy()
    checkpoints = pl.from_arrow(run.checkpoints()).lazy().select(pl.col("rounds").cast(pl.Int64))
    tables = {"road_cells": roads_polars.road_cells(frames["road_outcomes"])}
    histogram = round_histogram(groups, nets).collect().lazy()
    sessions = session_histogram(histogram, frames["sessions"], frames["session_edges"], nets).collect().lazy()
    marts = {
        "ev_convergence": ev_convergence(frames["opening"], frames["running_nets"], checkpoints, exact_bets, nets),
        "outcome_summary": outcome_summary(frames["outcome_totals"], exact_outcomes),
        "streaks": streaks(groups, exact_outcomes),
        "bet_performance": bet_performance(sessions, exact_bets),
        "payout_variance": payout_variance(sessions),
        "longest_streaks": longest_streaks(frames["longest_counts"]),
        "road_colours": road_colours(frames["road_marks"], road_shoes),
        "road_column_lengths": road_column_lengths(frames["road_columns"], road_shoes),
        "road_patterns": road_patterns(frames["road_conditions"], frames["road_marks"], road_shoes),
    }
    tables |= {name: arrow_table(frame) for name, frame in zip(marts, pl.collect_all(list(marts.values())))}
    return {name: tables[name] for name in MARTS if name not in PER_SHOE_MARTS}


def family(run: RunInput, road_cells_shoes: int, road_stats_shoes: int) -> Family:
    """Every mart of one run, by ranges of its shoes (see finals); shoe_summary as the files its range
    tasks write."""
    return marts_family(partials, finals, run, road_cells_shoes, road_stats_shoes)
