"""The composition marts in Polars: the same tables as composition_duckdb.py, written as lazy queries.

As in marts_polars.py, the SQL in pipeline/marts/sql is the specification: every function here
mirrors one SQL file (named in its docstring) step for step, and tests/functional/test_composition_marts.py
holds both engines to the same rows in the same order.
"""

import polars as pl
import pyarrow as pa

from pipeline.marts.inputs import COMPOSITION_MARTS, RunInput
from pipeline.marts.marts_polars import arrow_table

BUCKET = 26  # unseen cards per depth bucket
PERCENTILES = {"p01": 0.01, "p50": 0.5, "p99": 0.99}
Z95 = 1.96


def _long(frame: pl.LazyFrame, prefix: str, value: str, index: list[str]) -> pl.LazyFrame:
    """UNPIVOT ... ON COLUMNS('^prefix') INTO NAME column_name VALUE value (nulls left out), the prefix
    cut off as `name`."""
    columns = [c for c in frame.collect_schema().names() if c.startswith(prefix)]
    return (frame.select(*index, *columns)
            .unpivot(on=columns, index=index, variable_name="column_name", value_name=value)
            .drop_nulls(value)  # as UNPIVOT does: a bet or count the run lacks has null columns
            .with_columns(name=pl.col("column_name").str.slice(len(prefix))))


def round_evs(round_ev: pl.LazyFrame) -> pl.LazyFrame:
    """prep_round_evs.sql"""
    return (_long(round_ev, "ev_", "ev", ["shoe_id", "round", "unseen_cards"])
            .select("shoe_id", "round", "unseen_cards", bet="name", ev="ev"))


def advantage_by_depth(evs: pl.LazyFrame) -> pl.LazyFrame:
    """advantage_by_depth.sql; quantile "equiprobable" is nearest-rank, as quantile_disc."""
    ev = pl.col("ev")
    low = (pl.col("unseen_cards") - 1) // BUCKET * BUCKET + 1
    percentiles = {name: ev.quantile(q, interpolation="equiprobable") for name, q in PERCENTILES.items()}
    return (evs.group_by("bet", unseen_low=low)
            .agg(rounds=pl.len().cast(pl.Int64), mean_ev=ev.mean(), sd_ev=ev.std(),
                 share_positive=(ev > 0).sum() / pl.len(), **percentiles)
            .select("bet", "unseen_low", (pl.col("unseen_low") + BUCKET - 1).alias("unseen_high"),
                    "rounds", "mean_ev", "sd_ev", "share_positive", *PERCENTILES)
            .sort("bet", "unseen_low"))


def perfect_play(evs: pl.LazyFrame, rounds: pl.LazyFrame) -> pl.LazyFrame:
    """perfect_play.sql"""
    nets = _long(rounds, "net_", "net", ["shoe_id", "round"]).select("shoe_id", "round", bet="name", net="net")
    betting = pl.col("ev") > 0
    per_shoe = (evs.join(nets, on=["shoe_id", "round", "bet"])
                .group_by("bet", "shoe_id")
                .agg(rounds=pl.len().cast(pl.Int64), rounds_bet=betting.sum().cast(pl.Int64),
                     expected=pl.col("ev").filter(betting).sum(), net=pl.col("net").filter(betting).sum()))
    net = pl.col("net").cast(pl.Float64)
    half_width = Z95 * net.std() / pl.len().cast(pl.Float64).sqrt()
    return (per_shoe.group_by("bet")
            .agg(shoes=pl.len().cast(pl.Int64), rounds=pl.col("rounds").sum(), rounds_bet=pl.col("rounds_bet").sum(),
                 expected_sum=pl.col("expected").sum(), expected_units_per_shoe=pl.col("expected").mean(),
                 realised_net=pl.col("net").sum(), realised_units_per_shoe=net.mean(),
                 realised_ci_low=net.mean() - half_width, realised_ci_high=net.mean() + half_width)
            .select("bet", "shoes", "rounds", "rounds_bet",
                    (pl.col("rounds_bet") / pl.col("rounds")).alias("share_bet"),
                    pl.when(pl.col("rounds_bet") > 0).then(pl.col("expected_sum") / pl.col("rounds_bet"))
                    .alias("mean_edge"),
                    "expected_units_per_shoe", "realised_net", "realised_units_per_shoe", "realised_ci_low",
                    "realised_ci_high")
            .sort("bet"))


def count_efficiency(round_ev: pl.LazyFrame, perfect: pl.LazyFrame) -> pl.LazyFrame:
    """count_efficiency.sql"""
    names = round_ev.collect_schema().names()
    evs, counts = ([c for c in names if c.startswith(prefix)] for prefix in ("ev_", "true_count_"))
    tc, ev = pl.col("true_count"), pl.col("ev")
    paired = (round_ev.select(*evs, *counts)
              .unpivot(on=evs, index=counts, variable_name="ev_column", value_name="ev").drop_nulls("ev")
              .unpivot(on=counts, index=["ev_column", "ev"], variable_name="count_column", value_name="true_count")
              .drop_nulls("true_count")
              .select(count_system=pl.col("count_column").str.slice(len("true_count_")),
                      bet=pl.col("ev_column").str.slice(len("ev_")), true_count=tc,
                      high_level=(2 * tc).floor().cast(pl.Int64), low_level=(2 * tc).ceil().cast(pl.Int64), ev=ev))
    keys = ["count_system", "bet"]
    summed = dict(rounds=pl.len().cast(pl.Int64), ev_sum=ev.sum())
    levels = pl.concat([paired.group_by(*keys, level=f"{direction}_level").agg(**summed)
                        .select(*keys, direction=pl.lit(direction), level="level", rounds="rounds", ev_sum="ev_sum")
                        for direction in ("high", "low")])
    varies = (tc.min() < tc.max()) & (ev.min() < ev.max())
    fits = paired.group_by(keys).agg(rounds=pl.len().cast(pl.Int64), correlation=pl.when(varies).then(pl.corr(tc, ev)))
    series = [*keys, "direction"]
    grid = (levels.group_by(series)
            .agg(level=pl.int_ranges(pl.col("level").min(), pl.col("level").max() + 1).first())
            .explode("level"))
    far_end = dict(partition_by=series,
                   order_by=pl.when(pl.col("direction") == "high").then(-pl.col("level")).otherwise(pl.col("level")))
    cumulative = (grid.join(levels, on=[*series, "level"], how="left")
                  .select(*series, "level",
                          rounds_bet=pl.col("rounds").fill_null(0).cum_sum().over(**far_end),
                          ev_sum=pl.col("ev_sum").fill_null(0).cum_sum().over(**far_end)))
    per_shoe = pl.col("ev_sum") / pl.col("shoes")
    perfect_units = pl.col("perfect_units_per_shoe")
    return (cumulative.join(fits, on=keys)
            .join(perfect.select("bet", "shoes", perfect_units_per_shoe="expected_units_per_shoe"), on="bet")
            .select(*series, trigger=pl.col("level") / 2, rounds="rounds", rounds_bet="rounds_bet",
                    share_bet=pl.col("rounds_bet") / pl.col("rounds"),
                    mean_ev_bet=pl.when(pl.col("rounds_bet") > 0).then(pl.col("ev_sum") / pl.col("rounds_bet")),
                    expected_units_per_shoe=per_shoe, perfect_units_per_shoe=perfect_units,
                    share_of_perfect=pl.when(perfect_units != 0).then(per_shoe / perfect_units),
                    correlation="correlation")
            .sort(*series, "trigger"))


def composition_marts(round_ev: pl.LazyFrame, rounds: pl.LazyFrame) -> dict[str, pa.Table]:
    """From one run's round_ev rows and rounds (frames as composition_duckdb.composition_marts takes
    them), the composition marts as Arrow tables (before the contract's run_id and rules columns).
    Each query scans round_ev alone on the streaming engine, as marts_polars.build_marts does."""
    evs = round_evs(round_ev)
    perfect = perfect_play(evs, rounds).collect(engine="streaming").lazy()
    marts = {"advantage_by_depth": advantage_by_depth(evs), "perfect_play": perfect,
             "count_efficiency": count_efficiency(round_ev, perfect)}
    return {name: arrow_table(marts[name].collect(engine="streaming")) for name in COMPOSITION_MARTS}


def build_composition_marts(run: RunInput, round_ev: list[str]) -> dict[str, pa.Table]:
    """The composition marts of one run from its round_ev files and its rounds."""
    options = run.out.polars_options()
    return composition_marts(pl.scan_parquet(round_ev, hive_partitioning=False, storage_options=options),
                             pl.scan_parquet(run.files("rounds"), hive_partitioning=False, storage_options=options))
