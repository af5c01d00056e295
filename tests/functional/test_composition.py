"""Composition analytics: the information model, count systems as data, and the job writing round_ev,
checked against plain-Python recomputations that share no code with them."""

import os
import shutil
import time
from dataclasses import replace

import numpy as np
import pyarrow as pa
import pytest
import yaml
from spark_jobs import read_table, simulate

from pipeline.bets import BET_KINDS
from pipeline.cards import CARDS_PER_DECK
from pipeline.composition import job as composition_job
from pipeline.composition.counts import count_systems_for, known_count_systems, load_count_system
from pipeline.composition.information import compositions_array, unseen_compositions
from pipeline.config_files import resource
from pipeline.errors import BaccaratError
from pipeline.exact import exact_odds
from pipeline.jobs import run_job
from pipeline.rule_sets import RuleSet, load_rule_set
from pipeline.schemas import contract
from pipeline.simulate.batch import Dealer
from pipeline.storage import Store

RUN = "ez1"
SHOES_ANALYSED = 2
CARD_COLUMNS = ("player_card1", "player_card2", "player_card3", "banker_card1", "banker_card2", "banker_card3")
RANK_LABELS = "A23456789T"


@pytest.fixture(scope="module")
def one_deck_ez(tmp_path_factory):
    """EZ Baccarat with one deck: few rounds a shoe, so the exact EVs of every round stay quick."""
    document = yaml.safe_load(resource("conf", "rules", "ez_baccarat.yaml").read_text())
    document |= {"name": "ez_one_deck", "decks": 1}
    path = tmp_path_factory.mktemp("rules") / "ez_one_deck.yaml"
    path.write_text(yaml.safe_dump(document))
    return str(path)


@pytest.fixture(scope="module")
def analysed(spark, tmp_path_factory, one_deck_ez):
    """A committed run of 3 shoes, whose first 2 have round_ev rows (2 tasks)."""
    folder = tmp_path_factory.mktemp("composition") / "data"
    simulate(spark, folder, rules=one_deck_ez, seed=11, shoes=3, partitions=2, run_id=RUN)
    plan = composition_job.plan_for(Store.parse(str(folder)), RUN, SHOES_ANALYSED, None, partitions=2)
    run_job(spark, plan)
    return folder


def round_ev(folder, run_id=RUN) -> list[dict]:
    table = Store.parse(str(folder)).read_rows(composition_job.ROUND_EV, [run_id])
    return sorted(table.to_pylist(), key=lambda row: (row["shoe_id"], row["round"]))


def plain_compositions(rounds: list[dict], shoes: list[dict], decks: int) -> dict[tuple, list[int]]:
    """(shoe_id, round) -> the cards a player has not seen, by walking each shoe's rounds in order."""
    burn = {shoe["shoe_id"]: shoe["burn_card"] for shoe in shoes}
    unseen, out = {}, {}
    for row in sorted(rounds, key=lambda r: (r["shoe_id"], r["round"])):
        if row["shoe_id"] not in unseen:
            unseen[row["shoe_id"]] = [decks] * CARDS_PER_DECK
            if burn[row["shoe_id"]] is not None:
                unseen[row["shoe_id"]][burn[row["shoe_id"]]] -= 1
        counts = unseen[row["shoe_id"]]
        out[row["shoe_id"], row["round"]] = list(counts)
        for column in CARD_COLUMNS:
            if row[column] is not None:
                counts[row[column]] -= 1
    return out


def plain_counts(name: str, composition: list[int], decks: int) -> tuple[float, float]:
    """A shipped count system's running and true counts, summing its YAML tags over the seen cards."""
    document = yaml.safe_load(resource("conf", "counts", f"{name}.yaml").read_text())
    tags = {str(label): tag for label, tag in document["tags"].items()}
    running = document.get("initial_running_count") or 0
    for code, held in enumerate(composition):
        running += (decks - held) * tags[RANK_LABELS[min(code // 4, 9)]]
    return running, running * 52 / sum(composition)


def without_burn(name: str) -> RuleSet:
    return RuleSet.model_validate({**load_rule_set(name).model_dump(), "burn": {"enabled": False}})


@pytest.mark.parametrize("rule_set", [load_rule_set("ez_baccarat"), without_burn("punto_banco")],
                         ids=["burn", "no burn"])
def test_unseen_cards_are_the_shoe_less_the_burn_card_and_earlier_rounds(rule_set):
    rounds, shoes = Dealer.of(rule_set).deal(5, 0, 3)
    unseen = unseen_compositions(rounds, shoes, rule_set.decks)
    expected = plain_compositions(rounds.to_pylist(), shoes.to_pylist(), rule_set.decks)
    keys = list(zip(unseen["shoe_id"].to_pylist(), unseen["round"].to_pylist()))
    assert keys == sorted(expected)
    assert [list(row) for row in compositions_array(unseen)] == [expected[key] for key in keys]
    burned = {s["shoe_id"]: s["cards_burned"] for s in shoes.to_pylist()}
    left = {(r["shoe_id"], r["round"]): r["cards_left"] for r in rounds.to_pylist()}
    # the face-down burned cards are unseen, though no longer in the shoe
    assert unseen["unseen_cards"].to_pylist() == [left[key] + burned[key[0]] for key in keys]


def test_the_dealers_view_leaves_exactly_the_cards_left_in_the_shoe():
    rule_set = load_rule_set("ez_baccarat")
    rounds, shoes = Dealer.of(rule_set).deal(5, 0, 3)
    player = compositions_array(unseen_compositions(rounds, shoes, rule_set.decks))
    dealer = unseen_compositions(rounds, shoes, rule_set.decks, dealer_view=True)
    left = sorted((r["shoe_id"], r["round"], r["cards_left"]) for r in rounds.to_pylist())
    assert dealer["unseen_cards"].to_pylist() == [cards for _, _, cards in left]
    assert (player - compositions_array(dealer) >= 0).all()


def test_a_batch_in_any_order_gives_the_same_compositions():
    rule_set = load_rule_set("punto_banco")
    rounds, shoes = Dealer.of(rule_set).deal(9, 4, 2)
    reversed_rounds = rounds.take(pa.array(range(rounds.num_rows - 1, -1, -1)))
    assert unseen_compositions(reversed_rounds, shoes, 8).equals(unseen_compositions(rounds, shoes, 8))


def test_round_ev_rows_match_a_plain_recomputation(analysed, one_deck_ez):
    rule_set = load_rule_set(one_deck_ez)
    rows = round_ev(analysed)
    rounds = [r for r in read_table(analysed, RUN, "rounds").to_dicts() if r["shoe_id"] < SHOES_ANALYSED]
    shoes = read_table(analysed, RUN, "shoes").to_dicts()
    expected = plain_compositions(rounds, shoes, rule_set.decks)
    assert [(r["shoe_id"], r["round"]) for r in rows] == sorted(expected)
    counts = known_count_systems()  # every shipped system is meant for bets EZ Baccarat offers
    assert list(rows[0]) == contract("round_ev").table_schema(tuple(BET_KINDS), tuple(counts)).names
    assert all(row[f"ev_{kind}"] is None for row in rows for kind in BET_KINDS if kind not in rule_set.bets)
    for row in rows:
        composition = expected[row["shoe_id"], row["round"]]
        assert row["unseen_cards"] == sum(composition)
        odds = exact_odds(rule_set, composition)
        for kind in rule_set.bets:
            assert row[f"ev_{kind}"] == pytest.approx(float(odds.bets[kind].ev), rel=1e-12, abs=1e-15), kind
        for name in counts:
            running, true = plain_counts(name, composition, rule_set.decks)
            assert row[f"running_count_{name}"] == running
            assert row[f"true_count_{name}"] == pytest.approx(true, rel=1e-12)


def test_the_first_round_sees_only_the_burn_card(analysed):
    shoes = {s["shoe_id"]: s for s in read_table(analysed, RUN, "shoes").to_dicts()}
    firsts = [row for row in round_ev(analysed) if row["round"] == 1]
    assert len(firsts) == SHOES_ANALYSED
    for row in firsts:
        dragon = {4: -1, 5: -1, 6: -1, 7: -1, 8: 2, 9: 2}.get(shoes[row["shoe_id"]]["burn_card"] // 4 + 1, 0)
        assert row["unseen_cards"] == CARDS_PER_DECK - 1
        assert row["running_count_jacobson_dragon_7"] == dragon
        assert row["true_count_jacobson_dragon_7"] == pytest.approx(dragon * 52 / 51, rel=1e-12)


def test_rows_do_not_depend_on_the_partitions_and_a_rerun_is_a_no_op(spark, analysed, cli):
    store = Store.parse(str(analysed))
    before = round_ev(analysed)
    plan = composition_job.plan_for(store, RUN, SHOES_ANALYSED, None)
    before_job = int(time.time() * 1000)
    run_job(spark, replace(plan, partitions=1))  # other files, the same rows
    assert len(store.partition_files("round_ev", RUN)) == 1
    assert store.delta_table("round_ev").transaction_version(f"baccarat-composition:{RUN}") >= before_job
    assert round_ev(analysed) == before
    version = store.delta_table("round_ev").version()
    status, out, _ = cli("composition", "--run-id", RUN, "--out", analysed, "--shoes", SHOES_ANALYSED,
                         "--partitions", 2)
    assert status == 0 and "already committed" in out
    assert store.delta_table("round_ev").version() == version


def test_the_same_count_systems_in_another_order_are_a_no_op(analysed, cli):
    """`--counts` naming the run's count systems in another order computed every EV again, rows equal, and
    took the run's composition marts with it."""
    store = Store.parse(str(analysed))
    version = store.delta_table("round_ev").version()
    status, out, err = cli("composition", "--run-id", RUN, "--out", analysed, "--shoes", SHOES_ANALYSED,
                           "--counts", ",".join(reversed(known_count_systems())))
    assert status == 0 and "already committed" in out, out + err
    assert store.delta_table("round_ev").version() == version


def flip_bytes_in_the_middle(path, width: int | None = 8) -> None:
    """Damage `width` bytes in the middle of a Parquet file's data pages (between its leading magic and its
    footer, whose length its last 8 bytes give; None: all of them) and keep its size, as a bad disk or a
    stray write would."""
    data = bytearray(path.read_bytes())
    end = len(data) - 8 - int.from_bytes(data[-8:-4], "little")
    first = 4 if width is None else (4 + end) // 2
    last = end if width is None else first + width
    data[first:last] = bytes(255 - byte for byte in data[first:last])
    path.write_bytes(bytes(data))


def test_a_round_ev_file_damaged_in_place_is_found_refused_by_marts_and_written_again_by_the_same_composition(
        analysed, cli, tmp_path):
    """Its size and Parquet footer still check out: its SHA-256, recorded by the composition's commit, does not."""
    store = Store.parse(str(analysed))
    before = round_ev(analysed)
    damaged = analysed / store.partition_files(composition_job.ROUND_EV, RUN)[0]["path"]
    flip_bytes_in_the_middle(damaged)
    repair = f"repair: baccarat composition --run-id {RUN} --out {analysed} (with the --shoes and --counts"
    status, printed, _ = cli("verify", "--out", analysed, "--run-id", RUN)
    assert status == 1 and f"run {RUN!r}: data file fails its checksum: {damaged}; {repair}" in printed, printed
    marts = sorted(analysed.glob("marts/**/*"))
    status, printed, err = cli("marts", "--out", analysed, "--run-id", RUN, "--warehouse", tmp_path / "w.duckdb")
    assert (status, printed, err.count("\n")) == (1, "", 1) and str(damaged) in err and repair in err, err
    assert sorted(analysed.glob("marts/**/*")) == marts and not (tmp_path / "w.duckdb").exists()
    status, printed, err = cli("composition", "--run-id", RUN, "--out", analysed, "--shoes", SHOES_ANALYSED)
    assert status == 0 and "already committed" not in printed, err
    assert cli("verify", "--out", analysed, "--run-id", RUN)[0] == 0 and round_ev(analysed) == before


@pytest.mark.parametrize(("engine", "master"), [("duckdb", []), ("polars", []), ("polars", ["--master", "local[2]"])],
                         ids=["duckdb", "polars", "polars-spark-tasks"])
def test_an_engine_failing_on_a_run_file_no_check_caught_is_one_line_naming_the_run_and_verify(
        analysed, cli, tmp_path, engine, master):
    """A round_ev file committed before checksums were recorded, its data pages damaged in place: only the
    engine finds it (a DuckDB error, a Polars error or a Rust panic, a BaseException), which is one line and
    exit 1, in this process or in a Spark task. (Eight bytes flipped, the engines build marts from whatever
    the pages now hold.)"""
    copy = tmp_path / "data"
    shutil.copytree(analysed, copy)
    store = Store.parse(str(copy))
    files, schema = store.partition_files(composition_job.ROUND_EV, RUN), pa.schema(
        store.delta_table(composition_job.ROUND_EV).schema().to_arrow())
    for attempt, committed in enumerate(([], files)):  # committed again as a version recording no checksum did
        store.commit_partition(composition_job.ROUND_EV, RUN, committed, schema, ("test:old", attempt))
    for entry in files:
        flip_bytes_in_the_middle(copy / entry["path"], width=None)
    status, printed, err = cli("marts", "--out", copy, "--run-id", RUN, "--engine", engine,
                               "--warehouse", tmp_path / "w.duckdb", *master)
    assert (status, printed, err.count("\n")) == (1, "", 1), err
    assert f"run {RUN!r}: its marts cannot be built from its files (" in err
    assert f"check them with `baccarat verify --run-id {RUN} --out {copy}`" in err
    assert not list(copy.glob("marts/*/_delta_log")), "a mart was committed"  # a range's file may be written


def test_another_runs_count_columns_stay_in_the_table(spark, analysed, one_deck_ez, cli):
    simulate(spark, analysed, rules=one_deck_ez, seed=12, shoes=1, partitions=1, run_id="other")
    status, out, err = cli("composition", "--run-id", "other", "--out", analysed, "--counts", "jacobson_panda_8",
                           "--master", "local[2]")
    assert status == 0, err
    assert "committed round_ev of run 'other': 1 shoe, " in out and "count systems: jacobson_panda_8" in out
    schema = Store.parse(str(analysed)).delta_table("round_ev").schema().to_arrow()
    assert "true_count_jacobson_dragon_7" in pa.schema(schema).names
    other = round_ev(analysed, "other")
    assert all(row["true_count_jacobson_dragon_7"] is None and row["true_count_jacobson_panda_8"] is not None
               for row in other)
    assert all(row["true_count_jacobson_dragon_7"] is not None for row in round_ev(analysed))


def test_an_overwrite_of_the_run_removes_its_round_ev_rows(spark, analysed, one_deck_ez, cli):
    simulate(spark, analysed, rules=one_deck_ez, seed=14, shoes=1, partitions=1, run_id="replaced")
    assert cli("composition", "--run-id", "replaced", "--out", analysed, "--master", "local[2]")[0] == 0
    assert round_ev(analysed, "replaced")
    status, out, err = cli("simulate", "--rules", one_deck_ez, "--shoes", 1, "--seed", 15, "--out", analysed,
                           "--run-id", "replaced", "--overwrite", "--master", "local[2]")
    assert status == 0 and "exact odds before each round are removed" in out, err
    assert round_ev(analysed, "replaced") == [] and round_ev(analysed)  # the other runs keep theirs


def test_the_job_reads_and_writes_an_object_store(spark, bucket, one_deck_ez, cli):
    simulate(spark, bucket, rules=one_deck_ez, seed=13, shoes=2, partitions=2, run_id="s3run")
    status, out, err = cli("composition", "--run-id", "s3run", "--out", bucket, "--shoes", 1,
                           "--counts", "jacobson_dragon_7", "--master", "local[2]")
    assert status == 0, err
    rows = round_ev(bucket, "s3run")
    first_shoe = [r for r in read_table(bucket, "s3run", "rounds").to_dicts() if r["shoe_id"] == 0]
    assert [(r["shoe_id"], r["round"]) for r in rows] == sorted((r["shoe_id"], r["round"]) for r in first_shoe)
    assert f"version 1 of {bucket}/round_ev" in out  # created at version 0, then the commit


# -- count systems ---------------------------------------------------------------------------------

def test_the_shipped_count_systems_are_the_published_ones():
    assert {"jacobson_dragon_7", "jacobson_panda_8", "banker_player_simple"} <= set(known_count_systems())
    for name in known_count_systems():
        system = load_count_system(name)
        assert system.name == name and system.source
    dragon, panda = load_count_system("jacobson_dragon_7"), load_count_system("jacobson_panda_8")
    assert [dragon.tags[label] for label in RANK_LABELS] == [0, 0, 0, -1, -1, -1, -1, 2, 2, 0]
    assert [panda.tags[label] for label in RANK_LABELS] == [1, 1, -2, -2, -2, -1, -1, -2, 4, 1]
    assert dragon.bets["dragon_7"].trigger == 4 and panda.bets["panda_8"].trigger == 11


def test_the_default_count_systems_are_those_the_rule_set_can_use():
    assert [s.name for s in count_systems_for(load_rule_set("punto_banco"), None)] == ["banker_player_simple"]
    assert len(count_systems_for(load_rule_set("ez_baccarat"), None)) == len(known_count_systems())


def test_a_balanced_count_is_back_at_zero_once_every_card_is_seen():
    nothing_unseen = np.zeros((1, CARDS_PER_DECK), dtype=np.int16)
    for name in known_count_systems():
        system = load_count_system(name)
        assert system.balanced and system.running_counts(nothing_unseen, 8).tolist() == [0.0]


COUNT = {
    "name": "mine", "source": "a test", "tags": {"A": 0, 2: 0, 3: 0, 4: -1, 5: -1, 6: -1, 7: -1, 8: 2, 9: 2, "T": 0},
    "balanced": True, "true_count": "per_deck_unseen", "bets": {"dragon_7": {"favourable_when": "high"}},
}
BAD_COUNTS = [
    ({"tags": {**COUNT["tags"], "J": 0}}, "tags: unknown rank 'J' (ranks: A 2 3 4 5 6 7 8 9 T"),
    ({"tags": {**COUNT["tags"], 10: 0}}, "tags: unknown rank '10'"),
    ({"tags": {k: v for k, v in COUNT["tags"].items() if k != 9}}, "tags: no tag for rank 9"),
    ({"tags": {**COUNT["tags"], 4: "minus one"}}, "tags.4: Input should be a valid number"),
    ({"tags": {**COUNT["tags"], 4: True}}, "tags.4: Input should be a valid number"),
    ({"source": None}, "source: Field required"),
    ({"true_count": None}, "true_count: Field required"),
    ({"true_count": "per_card"}, "true_count: Input should be 'per_deck_unseen' or 'running'"),
    ({"balanced": False}, "balanced is false, but the tags of one deck sum to 0"),
    ({"balanced": False, "tags": {**COUNT["tags"], "A": 1}}, "an unbalanced count needs initial_running_count"),
    ({"initial_running_count": 3}, "a balanced count starts at 0"),
    ({"tags": {**COUNT["tags"], "A": 1}}, "balanced is true, but the tags of one deck sum to 4"),
    ({"bets": {"baccarat": {"favourable_when": "high"}}}, "unknown bet kind 'baccarat'"),
    ({"bets": {"dragon_7": {"favourable_when": "up"}}},
     "bets.dragon_7.favourable_when: Input should be 'high' or 'low'"),
    ({"name": "Bad Name"}, "name: String should match pattern"),
    ({"colour": "red"}, "colour: Extra inputs are not permitted"),
]


def write_count(tmp_path, changes: dict, name="mine.yaml"):
    document = {key: value for key, value in (COUNT | changes).items() if value is not None}
    path = tmp_path / name
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


@pytest.mark.parametrize(("changes", "message"), BAD_COUNTS)
def test_a_bad_count_file_is_one_line_naming_the_problem(tmp_path, changes, message):
    path = write_count(tmp_path, changes)
    with pytest.raises(BaccaratError) as refused:
        load_count_system(str(path))
    assert str(refused.value).startswith(f"count system {str(path)!r}: ") and message in str(refused.value)
    assert "\n" not in str(refused.value)


def test_an_unbalanced_count_starts_from_its_initial_count(tmp_path):
    tags = {**COUNT["tags"], "A": 1}  # the unbalanced Dragon 7 count: +4 a deck
    system = load_count_system(str(write_count(tmp_path, {"tags": tags, "balanced": False,
                                                          "initial_running_count": -32, "true_count": "running"})))
    composition = np.full((1, CARDS_PER_DECK), 8)
    composition[0, 0] -= 1  # an ace seen
    running = system.running_counts(composition, 8)
    assert running.tolist() == [-31.0] and system.true_counts(running, composition.sum(axis=1)).tolist() == [-31.0]


# -- bad input to the command ----------------------------------------------------------------------

def snapshot(folder):
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def bad_count_file(tmp_path, kind):
    if kind == "duplicate key":
        path = tmp_path / "twice.yaml"
        path.write_text(yaml.safe_dump(COUNT, sort_keys=False) + "balanced: false\n")
        return path
    return write_count(tmp_path, {"unknown rank": {"tags": {**COUNT["tags"], "Z": 1}},
                                  "non-numeric tag": {"tags": {**COUNT["tags"], 5: "x"}},
                                  "missing field": {"balanced": None},
                                  "shipped name": {"name": "jacobson_dragon_7", "tags": {**COUNT["tags"], 3: 1, 4: -2}},
                                  "lacking bet": {"bets": {"super_six": {"favourable_when": "high"}}}}[kind])


BAD_COMMANDS = [
    (["--run-id", "nope"], "unknown run id 'nope'"),
    (["--run-id", ".."], "is not allowed"),
    (["--run-id", RUN, "--shoes", "4"], "--shoes 4 is more than run 'ez1' holds (3 shoes)"),
    (["--run-id", RUN, "--shoes", "0"], "Input should be greater than or equal to 1"),
    (["--run-id", RUN, "--counts", "no_such_count"], "unknown count system 'no_such_count' (known: "),
    (["--run-id", RUN, "--counts", "jacobson_dragon_7,,jacobson_panda_8"], "an empty name"),
    (["--run-id", RUN, "--counts", "jacobson_dragon_7,jacobson_dragon_7"], "names the count system "
                                                                           "'jacobson_dragon_7' twice"),
    (["--run-id", RUN, "--counts", "/no/such/file.yaml"], "count system file not found: /no/such/file.yaml"),
    (["--run-id", RUN, "--counts", "{unknown rank}"], "tags: unknown rank 'Z'"),
    (["--run-id", RUN, "--counts", "{non-numeric tag}"], "tags.5: Input should be a valid number"),
    (["--run-id", RUN, "--counts", "{missing field}"], "balanced: Field required"),
    (["--run-id", RUN, "--counts", "{duplicate key}"], "duplicate key 'balanced'"),
    (["--run-id", RUN, "--counts", "{shipped name}"], "is named 'jacobson_dragon_7', like a shipped one it differs "
                                                      "from"),
    (["--run-id", RUN, "--counts", "{lacking bet}"], "is meant for super_six, which rule set 'ez_one_deck' does "
                                                     "not offer"),
]


@pytest.mark.parametrize(("args", "message"), BAD_COMMANDS)
def test_bad_input_is_one_line_and_commits_nothing(analysed, cli, tmp_path, args, message):
    args = [str(bad_count_file(tmp_path, a[1:-1])) if a.startswith("{") else a for a in args]
    before = snapshot(analysed)
    status, out, err = cli("composition", "--out", analysed, *args)
    assert status == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err, err
    assert snapshot(analysed) == before


def test_a_chemin_de_fer_run_was_a_traceback_in_every_task_and_left_a_round_ev_folder(spark, cli, tmp_path):
    """The exact EV before a round needs the table to decide every draw: a run of a game with options is
    refused in one line before Spark runs a task (it was a BaccaratError raised in each task, a traceback
    with exit 1, after round_ev's folder was made)."""
    out = tmp_path / "data"
    simulate(spark, out, rules="chemin_de_fer", seed=3, shoes=2, partitions=1, run_id="cdf")
    before = snapshot(out)
    status, printed, err = cli("composition", "--out", out, "--run-id", "cdf")
    assert (status, printed) == (2, "") and err.count("\n") == 1
    assert err.startswith("error: rule set 'chemin_de_fer' leaves drawing decisions to the players"), err
    assert snapshot(out) == before and not (out / "round_ev").exists()


def test_an_output_folder_without_runs(cli, tmp_path):
    status, _, err = cli("composition", "--run-id", RUN, "--out", tmp_path / "none")
    assert status == 2 and f"no output folder {tmp_path / 'none'}" in err


@pytest.mark.parametrize("kind", ["fifo", "device", "folder", "over the cap"])
def test_a_count_system_file_that_is_not_a_small_regular_file_is_refused_at_once(analysed, tmp_path, kind):
    """In a process of its own, given 60 s: a FIFO blocked the reader, /dev/zero filled the memory."""
    from cli_process import baccarat, one_line_refusal

    from pipeline.user_files import CONFIG_FILE_BYTES

    path = {"fifo": tmp_path / "count.fifo", "device": "/dev/zero", "folder": tmp_path,
            "over the cap": tmp_path / "big.yaml"}[kind]
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "over the cap":
        path.write_bytes(b"#" * (CONFIG_FILE_BYTES + 1))
    before = snapshot(analysed)
    done = baccarat(["composition", "--out", str(analysed), "--run-id", RUN, "--counts", str(path)], tmp_path)
    message = {"folder": "is a folder", "over the cap": "is larger than 1 MiB"}.get(kind, "is not a regular file")
    one_line_refusal(done.returncode, done.stdout, done.stderr, f"count system {str(path)!r} {message}")
    assert snapshot(analysed) == before
