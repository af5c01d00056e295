"""The composition marts in Polars: the same tables as composition_duckdb.py, written as lazy queries,
as partials over a range of a run's shoes and final queries over the merged partials
(pipeline/marts/partials.py).

As in marts_polars.py, the SQL in pipeline/marts/sql is the specification: every function here
mirrors one SQL file (named in its docstring) step for step, and tests/functional/test_composition_marts.py
holds both engines to the same rows in the same order.
"""

import polars as pl
import pyarrow as pa

from pipeline.marts.inputs import COMPOSITION_MARTS, RunInput
from pipeline.marts.partials_polars import arrow_table, range_scan
from pipeline.marts.partials import COMPOSITION_MERGED, Family, ShoeRange, composition_family

BUCKET = 26  # unseen cards per depth bucket
EV_BINS = 2 ** 16  # prep_ev_groups.sql: EV bins of width 2^-16
PERCENTILES = {"p01": 1, "p50": 50, "p99": 99}  # in % of a bucket's rounds
Z95 = 1.96
DEPTH = ["bet", "unseen_low"]
COUNTED = ["count_system", "bet"]


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


def ev_groups(evs: pl.LazyFrame) -> pl.LazyFrame:
    """prep_ev_groups.sql"""
    low = (pl.col("unseen_cards") - 1) // BUCKET * BUCKET + 1
    ev = pl.col("ev")
    return evs.group_by("bet", unseen_low=low.cast(pl.Int64), bin=(ev * EV_BINS).floor().cast(pl.Int64)).agg(
        rounds=pl.len().cast(pl.Int64), sum_ev=ev.sum(), m2_ev=ev.var(ddof=0) * pl.len(), min_ev=ev.min(),
        positive=(ev > 0).sum().cast(pl.Int64))


def advantage_by_depth(groups: pl.LazyFrame) -> pl.LazyFrame:
    """advantage_by_depth.sql; a percentile is the least EV of the first bin whose running count reaches
    its rank."""
    rounds, through = pl.col("rounds"), pl.col("through")
    n = rounds.sum()
    mean = pl.col("sum_ev").sum() / n
    spread = pl.col("m2_ev") + rounds * (pl.col("sum_ev") / rounds - mean).pow(2)
    percentiles = {name: pl.col("min_ev").filter(through >= ((n * percent + 99) // 100).clip(lower_bound=1)).min()
                   for name, percent in PERCENTILES.items()}
    return (groups.sort(*DEPTH, "bin").with_columns(through=rounds.cum_sum().over(DEPTH))
            .group_by(DEPTH)
            .agg(rounds=n.cast(pl.Int64), mean_ev=mean, sd_ev=pl.when(n > 1).then((spread.sum() / (n - 1)).sqrt()),
                 share_positive=pl.col("positive").sum() / n, **percentiles)
            .select(*DEPTH, (pl.col("unseen_low") + BUCKET - 1).alias("unseen_high"),
                    "rounds", "mean_ev", "sd_ev", "share_positive", *PERCENTILES)
            .sort(DEPTH))


def perfect_bets(evs: pl.LazyFrame, rounds: pl.LazyFrame) -> pl.LazyFrame:
    """prep_perfect_bets.sql"""
    nets = _long(rounds, "net_", "net", ["shoe_id", "round"]).select("shoe_id", "round", bet="name", net="net")
    betting = pl.col("ev") > 0
    per_shoe = (evs.join(nets, on=["shoe_id", "round", "bet"])
                .group_by("bet", "shoe_id")
                .agg(rounds=pl.len().cast(pl.Int64), rounds_bet=betting.sum().cast(pl.Int64),
                     expected=pl.col("ev").filter(betting).sum(), net=pl.col("net").filter(betting).sum()))
    shoes = pl.len().cast(pl.Int64)
    return (per_shoe.group_by("bet")
            .agg(shoes=shoes, rounds=pl.col("rounds").sum(), rounds_bet=pl.col("rounds_bet").sum(),
                 expected=pl.col("expected").sum(), sum_net=pl.col("net").sum(),
                 m2_net=pl.col("net").cast(pl.Float64).var(ddof=0) * shoes.cast(pl.Float64)))


def perfect_play(bets: pl.LazyFrame) -> pl.LazyFrame:
    """perfect_play.sql"""
    shoes = pl.col("shoes").cast(pl.Float64)
    mean = pl.col("sum_net").cast(pl.Float64) / shoes
    half_width = Z95 * (pl.col("m2_net") / pl.when(shoes > 1).then(shoes - 1)).sqrt() / shoes.sqrt()
    return (bets.select("bet", "shoes", "rounds", "rounds_bet",
                        share_bet=pl.col("rounds_bet") / pl.col("rounds"),
                        mean_edge=pl.when(pl.col("rounds_bet") > 0).then(pl.col("expected") / pl.col("rounds_bet")),
                        expected_units_per_shoe=pl.col("expected") / shoes,
                        realised_net="sum_net", realised_units_per_shoe=mean,
                        realised_ci_low=mean - half_width, realised_ci_high=mean + half_width)
            .sort("bet"))


def count_levels(round_ev: pl.LazyFrame) -> pl.LazyFrame:
    """prep_count_levels.sql"""
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
    rounds = pl.len().cast(pl.Float64)
    sums = dict(rounds=pl.len().cast(pl.Int64), sum_ev=ev.sum(), sum_tc=tc.sum(), m2_ev=ev.var(ddof=0) * rounds,
                m2_tc=tc.var(ddof=0) * rounds, m2_tc_ev=pl.cov(tc, ev, ddof=0) * rounds, min_ev=ev.min(),
                max_ev=ev.max(), min_tc=tc.min(), max_tc=tc.max())
    return pl.concat([paired.group_by(*COUNTED, level=f"{direction}_level").agg(**sums)
                      .select(*COUNTED, direction=pl.lit(direction), level="level", *sums)
                      for direction in ("high", "low")])


def _correlation(levels: pl.LazyFrame) -> pl.LazyFrame:
    """count_efficiency.sql's fits: the rounds and the correlation of each count system and bet, from the
    levels' co-moments moved to the means of every round."""
    rounds = pl.col("rounds")
    deviation = {name: pl.col(f"sum_{name}") / rounds - pl.col(f"sum_{name}").sum() / rounds.sum()
                 for name in ("tc", "ev")}

    def moment(first: str, second: str) -> pl.Expr:
        return (pl.col(f"m2_{first}" if first == second else f"m2_{first}_{second}")
                + rounds * deviation[first] * deviation[second]).sum()

    varies = (pl.col("min_tc").min() < pl.col("max_tc").max()) & (pl.col("min_ev").min() < pl.col("max_ev").max())
    spread = (moment("tc", "tc") * moment("ev", "ev")).sqrt()
    return (levels.filter(pl.col("direction") == "high").group_by(COUNTED)
            .agg(rounds=rounds.sum().cast(pl.Int64), correlation=pl.when(varies).then(moment("tc", "ev") / spread)))


def count_efficiency(levels: pl.LazyFrame, perfect: pl.LazyFrame) -> pl.LazyFrame:
    """count_efficiency.sql"""
    series = [*COUNTED, "direction"]
    grid = (levels.group_by(series)
            .agg(level=pl.int_ranges(pl.col("level").min(), pl.col("level").max() + 1).first())
            .explode("level"))
    far_end = dict(partition_by=series,
                   order_by=pl.when(pl.col("direction") == "high").then(-pl.col("level")).otherwise(pl.col("level")))
    cumulative = (grid.join(levels, on=[*series, "level"], how="left")
                  .select(*series, "level",
                          rounds_bet=pl.col("rounds").fill_null(0).cum_sum().over(**far_end),
                          ev_sum=pl.col("sum_ev").fill_null(0).cum_sum().over(**far_end)))
    per_shoe = pl.col("ev_sum") / pl.col("shoes")
    perfect_units = pl.col("perfect_units_per_shoe")
    return (cumulative.join(_correlation(levels), on=COUNTED)
            .join(perfect.select("bet", "shoes", perfect_units_per_shoe="expected_units_per_shoe"), on="bet")
            .select(*series, trigger=pl.col("level") / 2, rounds="rounds", rounds_bet="rounds_bet",
                    share_bet=pl.col("rounds_bet") / pl.col("rounds"),
                    mean_ev_bet=pl.when(pl.col("rounds_bet") > 0).then(pl.col("ev_sum") / pl.col("rounds_bet")),
                    expected_units_per_shoe=per_shoe, perfect_units_per_shoe=perfect_units,
                    share_of_perfect=pl.when(perfect_units != 0).then(per_shoe / perfect_units),
                    correlation="correlation")
            .sort(*series, "trigger"))


def range_partials(round_ev: pl.LazyFrame, rounds: pl.LazyFrame) -> dict[str, pa.Table]:
    """The composition partials of whole shoes' round_ev rows and rounds (frames as
    composition_duckdb.range_partials takes them). Each query scans alone on the streaming engine, as
    marts_polars.partials does."""
    evs = round_evs(round_ev)
    queries = {"ev_groups": ev_groups(evs), "perfect_bets": perfect_bets(evs, rounds),
               "count_levels": count_levels(round_ev)}
    return {name: arrow_table(queries[name].collect(engine="streaming")) for name in COMPOSITION_MERGED}


def finals(merged: dict[str, pa.Table]) -> dict[str, pa.Table]:
    """The composition marts from their merged partials, as Arrow tables (before the contract's run_id
    and rules columns)."""
    groups, bets, levels = (pl.from_arrow(merged[name]).lazy() for name in COMPOSITION_MERGED)
    perfect = perfect_play(bets).collect().lazy()
    marts = {"advantage_by_depth": advantage_by_depth(groups), "perfect_play": perfect,
             "count_efficiency": count_efficiency(levels, perfect)}
    return {name: arrow_table(marts[name].collect()) for name in COMPOSITION_MARTS}


def composition_marts(round_ev: pl.LazyFrame, rounds: pl.LazyFrame) -> dict[str, pa.Table]:
    """The composition marts of one run's round_ev rows and rounds (as range_partials takes them)."""
    return finals(range_partials(round_ev, rounds))


def partials(run: RunInput, shoes: ShoeRange, round_ev: tuple[str, ...]) -> dict[str, pa.Table]:
    """The composition partials of one range of a run's shoes, from its round_ev files and its rounds."""
    options = run.out.polars_options()
    in_range = pl.col("shoe_id").is_between(shoes.first, shoes.last - 1)
    evs = pl.scan_parquet(list(round_ev), hive_partitioning=False, storage_options=options).filter(in_range)
    return range_partials(evs, range_scan(shoes.rounds, shoes, options, run_row=False))


def family(run: RunInput) -> Family:
    """The composition marts of one run, by ranges of its shoes, from its round_ev files and its rounds."""
    return composition_family(partials, finals, run)
