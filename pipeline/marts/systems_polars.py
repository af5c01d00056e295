"""The betting-system marts in Polars: the same tables as systems_duckdb.py, written as lazy queries.

As in marts_polars.py, the SQL in pipeline/marts/sql is the specification: every function here mirrors
one SQL file (named in its docstring) step for step, and tests/unit/test_system_marts.py holds both
engines to the same rows in the same order.
"""

import polars as pl
import pyarrow as pa

from pipeline.marts.inputs import SYSTEM_MARTS, RunInput, rated_endings
from pipeline.marts.partials_polars import arrow_table

Z95 = 1.96
PERCENTILES = {"p05": 5, "p25": 25, "p50": 50, "p75": 75, "p95": 95}
CHECKPOINT = "bankroll_after_"
COMPLETE = pl.col("ended") != "incomplete"


def system_outcomes(sessions: pl.LazyFrame, endings: pl.LazyFrame) -> pl.LazyFrame:
    """system_outcomes.sql"""
    per_system = sessions.group_by("system").agg(
        complete_sessions=COMPLETE.sum().cast(pl.Int64), incomplete_sessions=(~COMPLETE).sum().cast(pl.Int64))
    per_ending = sessions.group_by("system", ending="ended").agg(sessions=pl.len().cast(pl.Int64))
    p, n, z = pl.col("p"), pl.col("complete_sessions").cast(pl.Float64), Z95
    centre, spread = p + z * z / (2 * n), z * (p * (1 - p) / n + z * z / (4 * n * n)).sqrt()
    return (per_system.join(endings, how="cross")
            .join(per_ending, on=["system", "ending"], how="left")
            .with_columns(pl.col("sessions").fill_null(0))
            .with_columns(p=pl.when(pl.col("complete_sessions") > 0)
                          .then(pl.col("sessions") / pl.col("complete_sessions")))
            .sort("system", "position")
            .select("system", "ending", "complete_sessions", "incomplete_sessions", "sessions", share=p,
                    share_low=pl.when(p == 0).then(0.0).otherwise((centre - spread) / (1 + z * z / n)),
                    share_high=pl.when(p == 1).then(1.0).otherwise((centre + spread) / (1 + z * z / n))))


def system_edge(sessions: pl.LazyFrame, terms: pl.LazyFrame) -> pl.LazyFrame:
    """system_edge.sql"""
    complete = sessions.filter(COMPLETE)
    wagered, count = pl.col("wagered"), pl.col("sessions")
    totals = (complete.group_by("system")
              .agg(sessions=pl.len().cast(pl.Int64), wagered=wagered.sum(), net=pl.col("net").sum(),
                   wagered_banker=pl.col("wagered_banker").sum(), wagered_player=pl.col("wagered_player").sum())
              .with_columns(ratio=pl.when(wagered > 0)
                            .then(pl.col("net").cast(pl.Float64) / wagered.cast(pl.Float64))))
    residual = pl.col("net").cast(pl.Float64) - pl.col("ratio") * wagered.cast(pl.Float64)
    spread = (complete.join(totals.select("system", "ratio"), on="system")
              .group_by("system").agg(squares=(residual ** 2).sum()))
    rest = wagered - pl.col("wagered_banker") - pl.col("wagered_player")
    staked = (pl.col("wagered_banker").cast(pl.Float64) * pl.col("ev_banker")
              + pl.col("wagered_player").cast(pl.Float64) * pl.col("ev_player")
              + pl.when(rest == 0).then(0.0).otherwise(rest.cast(pl.Float64) * pl.col("ev_bet")))
    half_width = pl.when(count > 1).then(
        Z95 * (pl.col("squares") / (count - 1) / count).sqrt() / (wagered.cast(pl.Float64) / count))
    low, high = pl.col("ratio") - pl.col("half_width"), pl.col("ratio") + pl.col("half_width")
    return (totals.join(spread, on="system").join(terms, on="system")
            .with_columns(half_width=half_width,
                          exact_edge=pl.when(wagered != 0).then(staked / wagered.cast(pl.Float64)))
            .sort("system")
            .select("system", "sessions", "wagered", "net", net_per_wagered="ratio", net_per_wagered_low=low,
                    net_per_wagered_high=high, exact_edge="exact_edge",
                    edge_in_interval=pl.col("exact_edge").is_between(low, high)))


def bankroll_paths(sessions: pl.LazyFrame) -> pl.LazyFrame:
    """bankroll_paths.sql; the histogram is counted one checkpoint column at a time (the UNPIVOT's rows,
    seven per session, are never held at once)."""
    complete, group = sessions.filter(COMPLETE), ["system", "after_rounds"]
    histogram = pl.concat([complete.group_by("system", bankroll=column)
                           .agg(sessions=pl.len().cast(pl.Int64))
                           .with_columns(after_rounds=pl.lit(int(column[len(CHECKPOINT):]), pl.Int64))
                           .drop_nulls("bankroll")
                           for column in sessions.collect_schema().names() if column.startswith(CHECKPOINT)])
    bankroll, count, at_or_below, total = pl.col("bankroll"), pl.col("sessions"), pl.col("at_or_below"), pl.col("total")
    cumulative = histogram.with_columns(at_or_below=count.cum_sum().over(group, order_by="bankroll"),
                                        total=count.sum().over(group))
    percentiles = {name: bankroll.filter(100 * at_or_below >= p * total).min() for name, p in PERCENTILES.items()}
    return (cumulative.group_by(group)
            .agg(sessions=total.first(), mean=(count * bankroll).sum().cast(pl.Float64) / total.first(), **percentiles)
            .sort(group)
            .select(*group, "sessions", "mean", *PERCENTILES))


def _cents(column: str) -> pl.Expr:
    """A decimal(18,2) column in whole cents, exactly."""
    return (pl.col(column) * 100).cast(pl.Int64)


def drawdowns(sessions: pl.LazyFrame, terms: pl.LazyFrame) -> pl.LazyFrame:
    """drawdowns.sql"""
    total = pl.col("sessions").sum().over("system")
    at_or_above = pl.col("sessions").cum_sum(reverse=True).over("system", order_by="drawdown_units")
    return (sessions.filter(COMPLETE).join(terms.select("system", "unit").drop_nulls("unit"), on="system")
            .group_by("system", drawdown_units=_cents("max_drawdown") // _cents("unit"))
            .agg(sessions=pl.len().cast(pl.Int64))
            .sort("system", "drawdown_units")
            .select("system", "drawdown_units", "sessions", share=pl.col("sessions") / total,
                    share_at_or_above=at_or_above / total))


def system_marts(sessions: pl.LazyFrame, terms: pl.LazyFrame, endings: pl.LazyFrame) -> dict[str, pa.Table]:
    """From one run's sessions, system terms and endings (frames as systems_duckdb.system_marts takes
    them), the system marts as Arrow tables (before the contract's run_id and rules columns)."""
    marts = {"system_outcomes": system_outcomes(sessions, endings), "system_edge": system_edge(sessions, terms),
             "bankroll_paths": bankroll_paths(sessions), "drawdowns": drawdowns(sessions, terms)}
    return {name: arrow_table(frame) for name, frame in zip(SYSTEM_MARTS, pl.collect_all(
        [marts[name] for name in SYSTEM_MARTS]))}


def build_system_marts(run: RunInput, sessions: list[str]) -> dict[str, pa.Table]:
    """The system marts of one run from its sessions files."""
    frame = pl.scan_parquet(sessions, hive_partitioning=False, storage_options=run.out.polars_options())
    names = frame.select(pl.col("system").unique().sort()).collect()["system"].to_list()
    return system_marts(frame, pl.from_arrow(run.system_terms(names)).lazy(), pl.from_arrow(rated_endings()).lazy())
