"""The marts: agreement with the exact mathematics on a million rounds, consistency between
tables, the `baccarat marts` command, the published warehouse, and bad input."""

import hashlib
import shutil
from dataclasses import replace
from math import sqrt

import duckdb
import polars as pl
import pyarrow.parquet as pq
import pytest
from spark_jobs import built_tables, one_process_ranges, simulate
from deltalake import DeltaTable

from pipeline.bets import BET_KINDS
from pipeline.marts.engines import Engine, build_marts
from pipeline.marts.inputs import MARTS, load_run
from pipeline.marts.publish import PER_SHOE_MARTS, publish_warehouse, write_marts
from pipeline.runs import read_run
from pipeline.schemas import contract
from pipeline.storage import WAREHOUSE, Store


def mart_rows(out, name: str, run_id: str) -> pl.DataFrame:
    """A mart's rows of one run, read by a generic Delta reader."""
    return pl.read_delta(str(out / contract(name).table)).filter(pl.col("run_id") == run_id)


def plain_reader(out) -> duckdb.DuckDBPyConnection:
    """The warehouse as any DuckDB client opens it read-only (docs/serving.md): the views' paths are
    relative to the data folder, which it searches."""
    con = duckdb.connect(str(out / WAREHOUSE), read_only=True)
    con.execute(f"SET file_search_path = '{out}'")
    return con


def files_per_run(out, name: str, run_id: str) -> int:
    """A mart's files per run: one, or for a mart the range tasks write, one per range of one process's
    build (a range per core at least)."""
    return one_process_ranges(read_run(Store.parse(str(out)), run_id).shoes) if name in PER_SHOE_MARTS else 1


def mart_files(out, name: str, run_id: str) -> list[str]:
    return [p for p in DeltaTable(str(out / contract(name).table)).file_uris() if f"run_id={run_id}/" in p]


@pytest.fixture(scope="module")
def million(spark, tmp_path_factory):
    """A committed run of at least a million rounds and its DuckDB marts, as Polars frames."""
    out = tmp_path_factory.mktemp("million")
    record = simulate(spark, out, seed=424242, shoes=12_500, partitions=4)
    run = load_run(Store.parse(str(out)), record.run_id)
    built = built_tables(run.out, build_marts(Engine.duckdb, run, 20, 0))
    return run, {name: pl.from_arrow(table) for name, table in built.items()}


def test_outcome_shares_agree_with_the_exact_odds(million):
    run, marts = million
    summary = marts["outcome_summary"]
    assert summary["outcome"].to_list() == ["B", "P", "T"]
    assert int(summary["rounds"][0]) == run.record.rounds >= 1_000_000
    assert summary["count"].cast(pl.Int64).sum() == run.record.rounds
    assert summary["exact_share"].to_list() == pytest.approx([0.458597, 0.446247, 0.095156], abs=1e-6)
    assert summary["z_score"].abs().max() < 4


def test_every_bet_agrees_with_its_exact_ev(million):
    run, marts = million
    bets = marts["bet_performance"]
    assert bets["bet"].to_list() == list(run.rule_set.bets)
    assert bets["z_score"].abs().max() < 4
    for row in bets.iter_rows(named=True):
        assert row["ev_ci_low"] < row["ev"] < row["ev_ci_high"]
        assert row["ev"] == pytest.approx(float(row["total_net"]) / int(row["rounds"]), rel=1e-12)
        assert row["sd"] == pytest.approx(row["exact_sd"], rel=0.02)


def test_streaks_follow_the_geometric_law_up_to_shoe_ends(million):
    run, marts = million
    streaks = marts["streaks"]
    entries = run.record.outcomes["B"] + run.record.outcomes["P"]
    cut = run.record.shoes / entries  # chance a streak is cut by the end of its shoe, per entry
    for side in ("B", "P", "T"):
        rows = streaks.filter(pl.col("side") == side)
        total = rows["streaks"].sum()
        assert rows["share"].sum() == pytest.approx(1)
        for row in rows.filter(pl.col("length") <= 6).iter_rows(named=True):
            error = sqrt(row["expected_share"] * (1 - row["expected_share"]) / total)
            assert abs(row["share"] - row["expected_share"]) < 4 * error + cut, row


def test_no_road_pattern_predicts_the_next_result(million):
    _, marts = million
    patterns = marts["road_patterns"]
    assert set(patterns["condition"]) == {"last_1", "last_2", "last_3", "last_4", "big_eye_boy", "small_road",
                                          "cockroach_pig"}
    assert patterns.filter(pl.col("condition") == "last_3").height == 8
    assert patterns["z_score"].abs().max() < 4.5  # 36 tests at once


def test_tables_agree_with_each_other(million):
    run, marts = million
    shoes, bets = marts["shoe_summary"], marts["bet_performance"]
    assert shoes.height == run.record.shoes
    assert shoes["rounds"].sum() == run.record.rounds
    assert shoes["banker_wins"].cast(pl.Int64).sum() == run.record.outcomes["B"]
    assert (shoes["chops"] == shoes["big_road_columns"] - 1).all()
    for row in bets.iter_rows(named=True):
        assert shoes[f"net_{row['bet']}"].sum() == row["total_net"]  # exact decimals
    variance = marts["payout_variance"]
    per_round = dict(variance.filter(pl.col("horizon") == "round").select("bet", "mean").iter_rows())
    assert [per_round[bet] for bet in bets["bet"]] == pytest.approx(bets["ev"].to_list(), rel=1e-12)
    banker = variance.filter((pl.col("bet") == "banker") & (pl.col("horizon") == "round")).row(0, named=True)
    assert (str(banker["p01"]), str(banker["p50"]), str(banker["p99"])) == ("-1.00", "0.00", "0.95")
    sessions = variance.filter((pl.col("bet") == "banker") & (pl.col("horizon") == "session_100")).row(0, named=True)
    assert int(sessions["sessions"]) == run.record.rounds // 100
    longest = marts["longest_streaks"].filter(pl.col("side") == "B")
    assert longest["shoes"].sum() == run.record.shoes
    assert longest["longest"].max() == shoes["longest_banker_streak"].max()


def test_ev_convergence_reaches_the_run_total(million):
    run, marts = million
    curve = marts["ev_convergence"].filter(pl.col("bet") == "banker")
    assert curve["rounds"].cast(pl.Int64).to_list()[:7] == [1, 2, 5, 10, 20, 50, 100]
    assert int(curve["rounds"][-1]) == run.record.rounds
    ev = marts["bet_performance"].filter(pl.col("bet") == "banker")["ev"][0]
    assert curve["ev"][-1] == pytest.approx(ev, rel=1e-12)
    assert curve["ev"][0] in (-1.0, 0.0, 0.95)


@pytest.mark.parametrize("engine", list(Engine))
def test_a_single_session_has_no_sd(spark, tmp_path, engine):
    record = simulate(spark, tmp_path, seed=9, shoes=16)
    assert 1000 <= record.rounds < 2000
    variance = pl.from_arrow(build_marts(engine, load_run(Store.parse(str(tmp_path)), record.run_id), 2, 0)["payout_variance"])
    single = variance.filter(pl.col("horizon") == "session_1000")
    assert single["sessions"].cast(pl.Int64).to_list() == [1] * single.height
    assert single["sd"].null_count() == single.height
    assert variance.filter(pl.col("horizon") == "shoe")["sd"].null_count() == 0


def test_road_cells_cover_a_bounded_sample(million):
    _, marts = million
    cells = marts["road_cells"]
    assert cells["shoe_id"].unique().sort().to_list() == list(range(20))
    assert set(cells["road"]) == {"bead_plate", "big_road", "big_eye_boy", "small_road", "cockroach_pig"}


# ------------------------------------------------------------------ the command and the warehouse


def snapshot(folder):
    return {p.relative_to(folder): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def two_committed_runs(spark, tmp_path_factory):
    """Two committed runs, simulated once for the module; tests change copies of them."""
    folder = tmp_path_factory.mktemp("two_runs")
    simulate(spark, folder, rules="punto_banco", seed=1, shoes=40, run_id="first")
    simulate(spark, folder, rules="super_six", seed=2, shoes=30, run_id="second")
    return folder


@pytest.fixture
def two_runs(two_committed_runs, tmp_path):
    """A folder of the test's own holding the two committed runs."""
    return shutil.copytree(two_committed_runs, tmp_path / "data")


@pytest.fixture(scope="module")
def two_runs_with_marts(two_committed_runs, tmp_path_factory):
    """The two committed runs, their marts and the warehouse built by `baccarat marts --out`, once for the
    module; tests change copies of them."""
    from pipeline.cli import main

    folder = shutil.copytree(two_committed_runs, tmp_path_factory.mktemp("two_runs_with_marts") / "data")
    assert main(["marts", "--out", str(folder)]) == 0
    return folder


@pytest.fixture
def built_runs(two_runs_with_marts, tmp_path):
    """A folder of the test's own holding the two committed runs, their marts and the warehouse, as
    `baccarat marts --out` left them."""
    return shutil.copytree(two_runs_with_marts, tmp_path / "data")


def test_marts_command_writes_every_mart_and_the_warehouse(cli, two_runs):
    status, out, err = cli("marts", "--out", two_runs, "--road-cells-shoes", 3)
    assert status == 0, err
    assert f"published {two_runs / WAREHOUSE}" in out
    for name in MARTS:
        table = DeltaTable(str(two_runs / contract(name).table)).to_pyarrow_table()
        expected = contract(name).arrow(tuple(BET_KINDS))
        assert [(f.name, f.type) for f in table.schema] == [(f.name, f.type) for f in expected]
        for run_id in ("first", "second"):
            assert len(mart_files(two_runs, name, run_id)) == files_per_run(two_runs, name, run_id)
    with plain_reader(two_runs) as con:
        for name in MARTS:
            assert con.execute(f"SELECT count(DISTINCT run_id) FROM {name}").fetchone()[0] == 2
        rounds = con.execute("SELECT run_id, count(*) FROM rounds GROUP BY run_id ORDER BY run_id").fetchall()
        store = Store.parse(str(two_runs))
        assert rounds == [("first", read_run(store, "first").rounds),
                          ("second", read_run(store, "second").rounds)]
        assert con.execute("SELECT count(*) FROM shoes").fetchone()[0] == 70
        net = con.execute("SELECT net_super_six FROM shoe_summary WHERE run_id = 'first' LIMIT 1").fetchone()[0]
        assert net is None  # punto_banco offers no Super Six


def test_marts_again_replace_a_runs_rows_with_the_same_rows(cli, built_runs):
    first = {name: mart_rows(built_runs, name, "second") for name in MARTS}
    status, out, _ = cli("marts", "--out", built_runs, "--run-id", "second", "--run-id", "second")
    assert status == 0 and out.count("marts of run 'second'") == 1  # built twice, before
    for name in MARTS:
        assert mart_rows(built_runs, name, "second").equals(first[name]), name
        assert len(mart_files(built_runs, name, "second")) == files_per_run(built_runs, name, "second")


def test_a_reader_of_the_old_warehouse_keeps_working_while_a_new_one_is_published(cli, spark, two_runs):
    assert cli("marts", "--out", two_runs, "--run-id", "first")[0] == 0
    reader = plain_reader(two_runs)
    before = reader.execute("SELECT count(*) FROM outcome_summary").fetchone()[0]
    assert cli("marts", "--out", two_runs)[0] == 0  # publishes a new file over the old one
    assert reader.execute("SELECT count(*) FROM outcome_summary").fetchone()[0] == before
    assert reader.execute("SELECT sum(count) FROM outcome_summary").fetchone()[0] > 0
    reader.close()
    with plain_reader(two_runs) as fresh:
        assert fresh.execute("SELECT count(DISTINCT run_id) FROM outcome_summary").fetchone()[0] == 2


def test_the_warehouse_only_holds_committed_runs(built_runs):
    DeltaTable(str(built_runs / "runs")).delete("run_id = 'second'")
    publish_warehouse(Store.parse(str(built_runs)), built_runs / WAREHOUSE)
    with plain_reader(built_runs) as con:
        assert con.execute("SELECT DISTINCT run_id FROM bet_performance").fetchall() == [("first",)]
        assert con.execute("SELECT DISTINCT run_id FROM rounds").fetchall() == [("first",)]


def damage_truncate(folder):
    path = next((folder / "rounds" / "run_id=first").glob("*.parquet"))
    path.write_bytes(path.read_bytes()[:100])
    return path, "data file is 100 bytes, its runs row records"


def damage_delete(folder):
    path = next((folder / "shoes" / "run_id=first").glob("*.parquet"))
    path.unlink()
    return path, "data file missing"


def _replace_with(folder, table):
    """Put another Parquet file in place of one of the run's files, and rewrite the runs row's checksum."""
    store = Store.parse(str(folder))
    record = read_run(store, "first")
    entry = record.files_of("rounds")[0]
    path = folder / entry.path
    pq.write_table(table, path)
    rewritten = replace(entry, sha256=hashlib.sha256(path.read_bytes()).hexdigest(), size=path.stat().st_size)
    files = replace(record, files=tuple(rewritten if f == entry else f for f in record.files)).row()["files"]
    DeltaTable(str(folder / "runs")).update({"files": f"'{files}'"}, predicate="run_id = 'first'")
    return path


def damage_column_missing(folder):
    path = next((folder / "rounds" / "run_id=first").glob("*.parquet"))
    return _replace_with(folder, pq.read_table(path).drop_columns(["net_tie"])), "column 'net_tie' is missing"


def damage_column_type(folder):
    path = next((folder / "rounds" / "run_id=first").glob("*.parquet"))
    table = pq.read_table(path)
    position = table.schema.get_field_index("banker_total")
    table = table.set_column(position, "banker_total", table["banker_total"].cast("int64"))
    return _replace_with(folder, table), "column 'banker_total' is int64, expected int8"


def test_a_refusal_names_only_the_runs_that_build(cli, built_runs):
    """With both runs damaged, marts' line said "the other runs build with --run-id second", which fails too."""
    damage_truncate(built_runs)
    for path in (built_runs / "rounds" / "run_id=second").glob("*.parquet"):
        path.write_bytes(path.read_bytes()[:1000])
    status, out, err = cli("marts", "--out", built_runs)
    assert (status, out, err.count("\n")) == (1, "", 1) and err.startswith("error: run 'first': "), err
    assert err.rstrip().endswith("(1 more refused: `baccarat verify` names them)"), err


def damage_runs_row(folder):
    DeltaTable(str(folder / "runs")).update({"files": "'oops'"}, predicate="run_id = 'first'")
    return "first", "the runs row of 'first' is malformed"


def damage_runs_row_to_null(folder):
    """Valid JSON that is not a list of files (the old manifest holding `null` was taken for no manifest)."""
    DeltaTable(str(folder / "runs")).update({"files": "'null'"}, predicate="run_id = 'first'")
    return "first", "the runs row of 'first' is malformed"


def damage_runs_row_entries(folder):
    DeltaTable(str(folder / "runs")).update({"files": "'[1, 2]'"}, predicate="run_id = 'first'")
    return "first", "the runs row of 'first' is malformed"


@pytest.mark.parametrize("damage", [damage_truncate, damage_delete, damage_column_missing, damage_column_type,
                                    damage_runs_row, damage_runs_row_to_null, damage_runs_row_entries])
def test_a_damaged_run_is_refused_naming_the_file_and_nothing_is_published(cli, built_runs, damage):
    path, message = damage(built_runs)
    before = snapshot(built_runs / "marts") | {WAREHOUSE: hashlib.sha256((built_runs / WAREHOUSE).read_bytes()).hexdigest()}
    status, out, err = cli("marts", "--out", built_runs)
    assert status == 1 and out == "" and err.count("\n") == 1
    assert message in err and str(path) in err
    assert err.rstrip().endswith("(the other runs build with --run-id second)")
    after = snapshot(built_runs / "marts") | {WAREHOUSE: hashlib.sha256((built_runs / WAREHOUSE).read_bytes()).hexdigest()}
    assert after == before
    status, _, err = cli("marts", "--out", built_runs, "--run-id", "second")  # other runs are unaffected
    assert status == 0 and "warning: run 'first' left out of the warehouse" in err


def test_a_run_left_out_of_the_warehouse_was_named_twice_in_its_warning(cli, built_runs):
    path, message = damage_truncate(built_runs)
    status, _, err = cli("marts", "--out", built_runs, "--run-id", "second")
    assert status == 0 and err.count("\n") == 1 and err.count("run 'first'") == 1
    assert err.startswith(f"warning: run 'first' left out of the warehouse: {message}") and str(path) in err


def test_a_malformed_runs_row_was_bad_input_not_damaged_data(cli, built_runs):
    """Exit 2 told the user to mend an argument; the row is damaged data, a failure of the world (1), and
    `verify` names it in one line where it let it out as bad input."""
    damage_runs_row_entries(built_runs)
    for command in (["marts"], ["verify"]):
        status, _, err = cli(*command, "--out", built_runs)
        assert status == 1 and err.count("\n") <= 1, err
    assert cli("verify", "--out", built_runs)[1].count("the runs row of 'first' is malformed") == 1


def test_the_published_line_claimed_every_committed_run_when_one_was_left_out(cli, built_runs):
    damage_truncate(built_runs)
    status, out, _ = cli("marts", "--out", built_runs, "--run-id", "second")
    assert status == 0 and "published " in out
    assert "marts of the committed runs but 1 left out (the warnings above)" in out


@pytest.mark.parametrize(("args", "message"), [
    (["--run-id", "nope"], "unknown run id 'nope'"),
    (["--engine", "pandas"], "Invalid value for '--engine'"),
    (["--road-cells-shoes", "-1"], "Invalid value for '--road-cells-shoes'"),
])
def test_bad_marts_arguments(cli, two_runs, args, message):
    status, _, err = cli("marts", "--out", two_runs, *args)
    assert status == 2 and message in err and err.count("\n") == 1


def test_no_committed_run(cli, tmp_path):
    status, _, err = cli("marts", "--out", tmp_path)
    assert status == 2 and f"no committed run in {tmp_path}" in err
    status, _, err = cli("marts", "--out", tmp_path / "missing")
    assert status == 2 and "no output folder" in err


def test_marts_are_written_per_run_with_write_marts(two_runs):
    run = load_run(Store.parse(str(two_runs)), "first")
    write_marts(run, build_marts(Engine.duckdb, run, 2, 0))
    cells = mart_rows(two_runs, "road_cells", "first")
    assert sorted(set(cells["shoe_id"].to_list())) == [0, 1]


def test_a_stray_parquet_file_in_the_tree_is_ignored(cli, built_runs):
    with plain_reader(built_runs) as con:
        before = con.execute("SELECT count(*) FROM rounds").fetchone()[0]
    stray = built_runs / "rounds" / "run_id=first" / "part-999999999999-999999999999.parquet"
    pq.write_table(pl.DataFrame({"shoe_id": ["not a number"], "surprise": [1.5]}).to_arrow(), stray)
    status, _, err = cli("marts", "--out", built_runs)
    assert status == 0, err  # readers take the committed files only
    with plain_reader(built_runs) as con:
        assert con.execute("SELECT count(*) FROM rounds").fetchone()[0] == before


def test_a_warehouse_or_report_that_cannot_be_written_is_one_line(cli, two_runs):
    status, out, err = cli("marts", "--out", two_runs, "--warehouse", "/proc/baccarat/w.duckdb")
    assert status == 2 and err.count("\n") == 1 and "cannot write the warehouse /proc/baccarat/w.duckdb" in err
    assert cli("marts", "--out", two_runs)[0] == 0
    status, out, err = cli("report", "--out", two_runs, "--page", "/proc/baccarat/index.html")
    assert status == 2 and out == "" and err.count("\n") == 1
    assert "cannot write the report /proc/baccarat/index.html" in err
