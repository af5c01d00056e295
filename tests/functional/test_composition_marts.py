"""The composition marts (advantage_by_depth, perfect_play, count_efficiency): both engines against a
plain-Python reference and against each other on synthetic round_ev rows, and `baccarat marts`
committing them, and the warehouse holding them, only for runs with round_ev rows."""

import math
import statistics
from decimal import Decimal

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa
import pytest
from spark_jobs import read_table, simulate
from deltalake import DeltaTable
from polars.testing import assert_frame_equal
from reference import assert_rows_close, binned_rank
from test_marts_parity import normalised

from pipeline.bets import BET_KINDS
from pipeline.composition import job as composition_job
from pipeline.jobs import run_job
from pipeline.marts import composition_duckdb, composition_polars
from pipeline.marts.inputs import COMPOSITION_MARTS
from pipeline.schemas import contract
from pipeline.storage import Store

NETS = [Decimal(n) for n in ("-1", "0", "0.95", "1", "8", "-1", "-1")]


def synthetic_round_ev(rounds: pa.Table, bets: list[str], counts: list[str], seed: int) -> pa.Table:
    """Made-up round_ev rows, one per round of `rounds` (shoe_id, round, cards_left): EVs rounded to
    3 decimals (ties at every percentile), the first bet's EV never positive, true counts landing
    exactly on half-integer triggers now and then."""
    rng = np.random.default_rng(seed)
    n = rounds.num_rows
    unseen = np.asarray(rounds["cards_left"].to_numpy(), dtype=np.int16)
    columns = {"shoe_id": rounds["shoe_id"], "round": rounds["round"], "unseen_cards": pa.array(unseen, pa.int16())}
    for position, bet in enumerate(bets):
        spread = 0.06 * (52 / unseen) ** 0.5
        ev = -0.4 - rng.random(n) if position == 0 else np.round(rng.normal(-0.02 * position, spread), 3)
        columns[f"ev_{bet}"] = pa.array(ev, pa.float64())
    for count in counts:
        running = rng.integers(-12, 13, n)
        true = running / (unseen / 52)
        exact = rng.random(n) < 0.2
        true[exact] = running[exact] / 2  # on the trigger grid
        columns[f"running_count_{count}"] = pa.array(running, pa.int64())
        columns[f"true_count_{count}"] = pa.array(true, pa.float64())
    return pa.table(columns)


def synthetic_run(shoes: int, seed: int) -> tuple[pa.Table, pa.Table]:
    """(round_ev, rounds) of a made-up run: three bets, two count systems, 30 to 60 rounds a shoe
    from 410 unseen cards down by 6, and one round of the whole run dealt with 1-26 unseen cards;
    round_ev also has null columns for a bet and a count system the run lacks."""
    rng = np.random.default_rng(seed)
    shoe_ids, round_numbers, cards_left = [], [], []
    for shoe in range(shoes):
        length = int(rng.integers(30, 61))
        shoe_ids += [shoe] * length
        round_numbers += range(1, length + 1)
        cards_left += [410 - 6 * r for r in range(length)]
    cards_left[-1] = 20  # alone in its bucket
    bets = ["player", "banker", "dragon_7"]
    keys = pa.table({"shoe_id": pa.array(shoe_ids, pa.int64()), "round": pa.array(round_numbers, pa.int16()),
                     "cards_left": pa.array(cards_left, pa.int16())})
    nets = {f"net_{bet}": pa.array([NETS[i] for i in rng.integers(0, len(NETS), keys.num_rows)], pa.decimal128(9, 2))
            for bet in bets}
    rounds = pa.table({"shoe_id": keys["shoe_id"], "round": keys["round"], **nets})
    round_ev = synthetic_round_ev(keys, bets, ["hilo", "dragon"], seed)
    lacking = pa.nulls(keys.num_rows, pa.float64())  # the table's columns of a bet and a count the run lacks
    return round_ev.append_column("ev_tie", lacking).append_column("true_count_panda", lacking), rounds


# --- the reference: each mart's definition, written out plainly ------------------------------------

def bets_of(round_ev: pa.Table) -> list[str]:
    """The bets with EVs: a round_ev column that is all null stands for a bet the run lacks."""
    return sorted(c[3:] for c in round_ev.column_names if c.startswith("ev_") and round_ev[c].null_count == 0)


def counts_of(round_ev: pa.Table) -> list[str]:
    return sorted(c[11:] for c in round_ev.column_names
                  if c.startswith("true_count_") and round_ev[c].null_count == 0)


def reference_depth(round_ev: pa.Table) -> list[dict]:
    rows, out = round_ev.to_pylist(), []
    for bet in bets_of(round_ev):
        buckets: dict[int, list[float]] = {}
        for row in rows:
            buckets.setdefault((row["unseen_cards"] - 1) // 26, []).append(row[f"ev_{bet}"])
        for bucket, evs in sorted(buckets.items()):
            ordered = sorted(evs)
            out.append({"bet": bet, "unseen_low": 26 * bucket + 1, "unseen_high": 26 * bucket + 26,
                        "rounds": len(evs), "mean_ev": statistics.fmean(evs),
                        "sd_ev": statistics.stdev(evs) if len(evs) > 1 else None,
                        "share_positive": sum(ev > 0 for ev in evs) / len(evs),
                        **{f"p{p:02d}": binned_rank(ordered, p) for p in (1, 50, 99)}})
    return out


def reference_perfect(round_ev: pa.Table, rounds: pa.Table) -> list[dict]:
    nets = {(r["shoe_id"], r["round"]): r for r in rounds.to_pylist()}
    rows, out = round_ev.to_pylist(), []
    shoes = sorted({row["shoe_id"] for row in rows})
    for bet in bets_of(round_ev):
        bet_rows = [row for row in rows if row[f"ev_{bet}"] > 0]
        expected = {shoe: sum(r[f"ev_{bet}"] for r in bet_rows if r["shoe_id"] == shoe) for shoe in shoes}
        realised = {shoe: sum((nets[(r["shoe_id"], r["round"])][f"net_{bet}"] for r in bet_rows
                               if r["shoe_id"] == shoe), Decimal(0)) for shoe in shoes}
        per_shoe = [float(realised[shoe]) for shoe in shoes]
        mean = statistics.fmean(per_shoe)
        half = 1.96 * statistics.stdev(per_shoe) / math.sqrt(len(shoes)) if len(shoes) > 1 else None
        out.append({"bet": bet, "shoes": len(shoes), "rounds": len(rows), "rounds_bet": len(bet_rows),
                    "share_bet": len(bet_rows) / len(rows),
                    "mean_edge": statistics.fmean(r[f"ev_{bet}"] for r in bet_rows) if bet_rows else None,
                    "expected_units_per_shoe": statistics.fmean(expected.values()),
                    "realised_net": sum(realised.values()), "realised_units_per_shoe": mean,
                    "realised_ci_low": None if half is None else mean - half,
                    "realised_ci_high": None if half is None else mean + half})
    return out


def reference_counts(round_ev: pa.Table, perfect: list[dict]) -> list[dict]:
    rows, out = round_ev.to_pylist(), []
    shoes = len({row["shoe_id"] for row in rows})
    perfect_units = {r["bet"]: r["expected_units_per_shoe"] for r in perfect}
    sides = {"high": (math.floor, lambda tc, trigger: tc >= trigger),
             "low": (math.ceil, lambda tc, trigger: tc <= trigger)}
    for count in counts_of(round_ev):
        counts = [row[f"true_count_{count}"] for row in rows]
        for bet in bets_of(round_ev):
            evs = [row[f"ev_{bet}"] for row in rows]
            varies = len(set(counts)) > 1 and len(set(evs)) > 1
            correlation = statistics.correlation(counts, evs) if varies else None
            for direction, (rounding, bets_at) in sides.items():
                levels = [rounding(2 * tc) for tc in counts]
                for level in range(min(levels), max(levels) + 1):
                    bet_evs = [ev for tc, ev in zip(counts, evs) if bets_at(tc, level / 2)]
                    units = sum(bet_evs) / shoes
                    out.append({"count_system": count, "bet": bet, "direction": direction, "trigger": level / 2,
                                "rounds": len(rows), "rounds_bet": len(bet_evs), "share_bet": len(bet_evs) / len(rows),
                                "mean_ev_bet": statistics.fmean(bet_evs) if bet_evs else None,
                                "expected_units_per_shoe": units, "perfect_units_per_shoe": perfect_units[bet],
                                "share_of_perfect": units / perfect_units[bet] if perfect_units[bet] else None,
                                "correlation": correlation})
    return out


def reference_marts(round_ev: pa.Table, rounds: pa.Table) -> dict[str, list[dict]]:
    perfect = reference_perfect(round_ev, rounds)
    return {"advantage_by_depth": reference_depth(round_ev), "perfect_play": perfect,
            "count_efficiency": reference_counts(round_ev, perfect)}


# --- both engines on synthetic data -------------------------------------------------------------------

def duckdb_marts(round_ev: pa.Table, rounds: pa.Table) -> dict[str, pa.Table]:
    con = duckdb.connect()
    con.register("round_ev", round_ev)
    con.register("rounds", rounds)
    return composition_duckdb.composition_marts(con)


def polars_marts(round_ev: pa.Table, rounds: pa.Table) -> dict[str, pa.Table]:
    return composition_polars.composition_marts(pl.from_arrow(round_ev).lazy(), pl.from_arrow(rounds).lazy())


@pytest.fixture(scope="module", params=[(6, 1), (1, 2)], ids=["six_shoes", "one_shoe"])
def built(request):
    """A synthetic run, its reference marts, and both engines' marts."""
    round_ev, rounds = synthetic_run(*request.param)
    return (round_ev, reference_marts(round_ev, rounds), duckdb_marts(round_ev, rounds),
            polars_marts(round_ev, rounds))


@pytest.mark.parametrize("engine", ["duckdb", "polars"])
@pytest.mark.parametrize("mart", COMPOSITION_MARTS)
def test_each_engine_gives_the_reference_rows(built, engine, mart):
    _, reference, duck, polars = built
    table = duck if engine == "duckdb" else polars
    assert_rows_close(normalised(table[mart]).to_dicts(), reference[mart])


@pytest.mark.parametrize("mart", COMPOSITION_MARTS)
def test_polars_marts_match_duckdb(built, mart):
    _, _, duck, polars = built
    left, right = normalised(duck[mart]), normalised(polars[mart])
    assert left.height > 0 and left.schema == right.schema
    assert_frame_equal(left, right, check_dtypes=False, rel_tol=1e-9)


def test_the_edge_cases_are_there(built):
    """The data reach what the marts must handle: a bet never favourable, a bucket of one round,
    percentiles among tied EVs, true counts exactly on a trigger."""
    round_ev, reference, duck, _ = built
    perfect = {row["bet"]: row for row in normalised(duck["perfect_play"]).to_dicts()}
    assert perfect["player"]["rounds_bet"] == 0 and perfect["player"]["mean_edge"] is None
    assert perfect["player"]["expected_units_per_shoe"] == 0 and perfect["player"]["realised_net"] == 0
    assert perfect["banker"]["rounds_bet"] > 0
    depth = normalised(duck["advantage_by_depth"])
    single = depth.filter(pl.col("unseen_low") == 1)
    assert single["rounds"].to_list() == [1, 1, 1] and single["sd_ev"].null_count() == 3
    assert (single["p01"] == single["p99"]).all()
    banker = round_ev["ev_banker"].to_pylist()
    assert len(set(banker)) < len(banker)
    counts = normalised(duck["count_efficiency"])
    player = counts.filter(pl.col("bet") == "player")
    assert player["share_of_perfect"].null_count() == player.height
    assert player["correlation"].null_count() == 0  # its EV varies, only never above 0
    tc = pl.from_arrow(round_ev)["true_count_hilo"]
    assert ((tc * 2) == (tc * 2).floor()).any()


def test_triggers_step_by_half_over_the_true_counts_reached(built):
    round_ev, _, duck, _ = built
    counts = normalised(duck["count_efficiency"])
    assert set(counts["bet"]) == {"player", "banker", "dragon_7"}  # no rows for the bet the run lacks
    assert set(counts["count_system"]) == {"hilo", "dragon"} and set(counts["direction"]) == {"high", "low"}
    for count in ("hilo", "dragon"):
        tc = pl.from_arrow(round_ev)[f"true_count_{count}"]
        for direction, rounding, everything in (("high", math.floor, 0), ("low", math.ceil, -1)):
            series = counts.filter((pl.col("count_system") == count) & (pl.col("bet") == "banker")
                                   & (pl.col("direction") == direction))
            triggers = series["trigger"]
            assert triggers[0] == rounding(2 * tc.min()) / 2 and triggers[-1] == rounding(2 * tc.max()) / 2
            assert (triggers.diff().drop_nulls() == 0.5).all()
            assert series["share_bet"][everything] == 1.0  # the far end's trigger bets every round


# --- `baccarat marts` on the composition job's rows: committed, and in the warehouse ----------------

def compose(spark, out, run_id: str, shoes: int) -> tuple[pa.Table, pa.Table]:
    """Run the composition job on a committed run's first shoes; returns its committed round_ev rows
    and the run's rounds (keys and nets)."""
    store = Store.parse(str(out))
    run_job(spark, composition_job.plan_for(store, run_id, shoes, None, partitions=1))
    round_ev = store.read_rows(composition_job.ROUND_EV, [run_id]).drop_columns(["run_id"])
    rounds = read_table(out, run_id, "rounds")
    return round_ev, rounds.select("shoe_id", "round", pl.col("^net_.*$")).to_arrow()


def warehouse_rows(out, table: str) -> pl.DataFrame:
    with duckdb.connect(str(out / "warehouse.duckdb"), read_only=True) as con:
        return con.sql(f"SELECT * FROM {table} ORDER BY ALL").pl()


def test_marts_command_commits_composition_marts_only_for_runs_with_round_ev(spark, cli, tmp_path):
    simulate(spark, tmp_path, rules="ez_baccarat", seed=3, shoes=8, partitions=2, run_id="with-ev")
    simulate(spark, tmp_path, rules="punto_banco", seed=4, shoes=6, partitions=1, run_id="without-ev")
    status, _, err = cli("marts", "--out", tmp_path)
    assert status == 0, err
    with duckdb.connect(str(tmp_path / "warehouse.duckdb"), read_only=True) as con:
        for name in COMPOSITION_MARTS:  # no run has round_ev rows: the tables are there, empty and typed
            assert con.sql(f"SELECT count(*) FROM {name}").fetchall() == [(0,)]
            types = con.sql(f"SELECT * FROM {name}").to_arrow_table().schema
            assert [(f.name, f.type) for f in types] == [(f.name, f.type) for f in contract(name).arrow()]

    round_ev, rounds = compose(spark, tmp_path, "with-ev", shoes=5)  # the job's rows of the first 5 shoes
    reference = reference_marts(round_ev, rounds)
    assert {row["shoes"] for row in reference["perfect_play"]} == {5}
    for engine in ("polars", "duckdb"):
        status, _, err = cli("marts", "--out", tmp_path, "--engine", engine)
        assert status == 0, err
        for name in COMPOSITION_MARTS:
            delta = DeltaTable(str(tmp_path / contract(name).table))
            assert {p["run_id"] for p in delta.partitions()} == {"with-ev"}
            committed, expected = delta.to_pyarrow_table().schema, contract(name).arrow(tuple(BET_KINDS))
            assert [(f.name, f.type) for f in committed] == [(f.name, f.type) for f in expected]
            rows = warehouse_rows(tmp_path, name)
            assert set(rows["run_id"]) == {"with-ev"} and set(rows["rules"]) == {"ez_baccarat"}
            assert_rows_close(normalised(rows.drop("run_id", "rules").to_arrow()).sort(
                contract(name).order_by[1:]).to_dicts(), reference[name])

    store = Store.parse(str(tmp_path))  # the run's round_ev rows removed in a Delta commit of no file
    schema = pa.schema(store.delta_table(composition_job.ROUND_EV).schema().to_arrow())
    store.commit_partition(composition_job.ROUND_EV, "with-ev", [], schema, ("test:with-ev", 2))
    assert cli("marts", "--out", tmp_path, "--run-id", "with-ev")[0] == 0  # its round_ev rows are gone
    for name in COMPOSITION_MARTS:
        assert warehouse_rows(tmp_path, name).height == 0
        assert DeltaTable(str(tmp_path / contract(name).table)).partitions() == []
