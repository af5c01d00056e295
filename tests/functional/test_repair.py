"""Damaged runs on both stores: `baccarat verify` finds each damage in a line naming it, the readers
refuse the run naming the repair command, and `simulate --overwrite` (the command verify names) deals
it again into a run byte-identical to a clean one (docs/repair.md)."""

import json
import os
import shlex
import shutil
from dataclasses import replace
from datetime import timedelta

import pyarrow.fs as pafs
import pytest
from spark_jobs import read_table, simulate
from test_faults import refuse_commits_of

from pipeline.runs import DATA_TABLES, commit_run, read_run, read_runs
from pipeline.storage import DELTA_LOG, Store

SHOES, PARTITIONS = 200, 2
FIRST = {"seed": 7, "run_id": "first"}
SECOND = {"seed": 8, "run_id": "second"}


def _bytes(store: Store, path: str) -> bytes:
    with store.filesystem.open_input_stream(store.fs_path(path)) as stream:
        return stream.read()


def _write(store: Store, path: str, data: bytes) -> None:
    with store.filesystem.open_output_stream(store.fs_path(path)) as stream:
        stream.write(data)


def _run_bytes(store: Store, run_id: str) -> dict[str, bytes]:
    run = read_run(store, run_id)
    return {f.path: _bytes(store, f.path) for table in DATA_TABLES for f in run.files_of(table)}


@pytest.fixture(scope="module")
def first_on_disk(spark, tmp_path_factory):
    """The first run alone, committed in a folder once for the module: tests change copies."""
    out = tmp_path_factory.mktemp("first")
    simulate(spark, out, shoes=SHOES, partitions=PARTITIONS, **FIRST)
    return out


@pytest.fixture(scope="module")
def clean(first_on_disk):
    """The files and rows of a clean run of the first run's parameters."""
    return (_run_bytes(Store.parse(str(first_on_disk)), "first"),
            {t: read_table(first_on_disk, "first", t) for t in DATA_TABLES})


@pytest.fixture(scope="module")
def two_runs_on_disk(spark, tmp_path_factory):
    """The first and the second run committed in a folder, once for the module: tests damage copies."""
    out = tmp_path_factory.mktemp("two_runs")
    for parameters in (FIRST, SECOND):
        simulate(spark, out, shoes=SHOES, partitions=PARTITIONS, **parameters)
    return out


def commit_two_runs(spark, store_uri: str, request) -> None:
    """The first and the second run in store_uri: a copy of the module's on a disk, simulated in a bucket."""
    if store_uri.startswith("s3://"):
        for parameters in (FIRST, SECOND):
            simulate(spark, store_uri, shoes=SHOES, partitions=PARTITIONS, **parameters)
    else:
        shutil.copytree(request.getfixturevalue("two_runs_on_disk"), store_uri, dirs_exist_ok=True)


def _file(store: Store, table: str = "rounds") -> str:
    return read_run(store, "first").files_of(table)[0].path


def truncate_a_file(store: Store) -> tuple[str, dict]:
    path = _file(store)
    _write(store, path, _bytes(store, path)[:1000])
    return store.location(path), FIRST


def random_bytes_in_a_file(store: Store) -> tuple[str, dict]:
    path = _file(store)
    _write(store, path, os.urandom(len(_bytes(store, path))))
    return store.location(path), FIRST


def delete_a_file(store: Store) -> tuple[str, dict]:
    path = _file(store, "shoes")
    store.filesystem.delete_file(store.fs_path(path))
    return store.location(path), FIRST


def _commit(table: str, version: int) -> str:
    """A table's log entry: version 0 creates it, version 1 is the first run's commit, 2 the second's."""
    return f"{table}/{DELTA_LOG}/{version:020d}.json"


def delete_a_log_entry(store: Store) -> tuple[str, dict]:
    store.filesystem.delete_file(store.fs_path(_commit("rounds", 1)))
    return store.location(_commit("rounds", 1)), FIRST


def corrupt_a_log_entry(store: Store) -> tuple[str, dict]:
    _write(store, _commit("rounds", 1), os.urandom(300))
    return store.location(_commit("rounds", 1)), FIRST


def corrupt_the_first_log_entry(store: Store) -> tuple[str, dict]:
    """Version 0, the table's creation: once set aside, no version is left and the table is made again."""
    _write(store, _commit("rounds", 0), b"\x00" * 40)
    return store.location(_commit("rounds", 0)), FIRST


def lose_the_newest_log_entry(store: Store) -> tuple[str, dict]:
    """The log stays whole, and ends before the commit the second run's row records."""
    store.filesystem.delete_file(store.fs_path(_commit("shoes", 2)))
    return "the shoes table does not hold the files its runs row lists (its log ends at version 1", SECOND


def delete_a_runs_log_entry(store: Store) -> tuple[str, dict]:
    store.filesystem.delete_file(store.fs_path(_commit("runs", 1)))
    return store.location(_commit("runs", 1)), FIRST


def edit_a_runs_row(store: Store) -> tuple[str, dict]:
    """A row changed by a Delta commit of its own, its files untouched: verify passed it as sound."""
    rounds = read_run(store, "first").rounds
    store.delta_table("runs").update({"rounds": "rounds + 1"}, predicate="run_id = 'first'")
    return f"its runs row records {rounds + 1:,} rounds, the rounds files it lists hold {rounds:,}", FIRST


def edit_a_files_row_count(store: Store) -> tuple[str, dict]:
    """A round moved from one file's recorded count to the next's, the totals still adding up: verify
    did not compare a file's recorded row count with its Parquet footer."""
    run = read_run(store, "first")
    first, second = run.files_of("rounds")
    moved = {first: replace(first, rows=first.rows - 1), second: replace(second, rows=second.rows + 1)}
    files = tuple(moved.get(entry, entry) for entry in run.files)
    commit_run(store, replace(run, files=files, started_at=run.started_at + timedelta(seconds=1)))
    footer = f"data file holds {first.rows:,} rows by its Parquet footer, {first.rows - 1:,} recorded"
    return f"{footer}: {store.location(first.path)}", FIRST


DAMAGES = [truncate_a_file, random_bytes_in_a_file, delete_a_file, delete_a_log_entry, corrupt_a_log_entry,
           corrupt_the_first_log_entry, lose_the_newest_log_entry, delete_a_runs_log_entry, edit_a_runs_row,
           edit_a_files_row_count]


def _command(store_uri: str, parameters: dict) -> list[str]:
    return ["simulate", "--rules", "punto_banco", "--seed", str(parameters["seed"]), "--shoes", str(SHOES),
            "--partitions", str(PARTITIONS), "--run-id", parameters["run_id"], "--out", store_uri]


@pytest.mark.parametrize("damage", DAMAGES)
def test_a_damaged_run_is_found_by_verify_and_repaired_by_simulate_overwrite(spark, cli, store_uri, clean, damage,
                                                                            request):
    commit_two_runs(spark, store_uri, request)
    verified = (0, f"verified 2 runs in {store_uri}: every log, file and contract checks out\n", "")
    assert cli("verify", "--out", store_uri) == verified
    store = Store.parse(store_uri)
    before = _run_bytes(store, "second")
    damaged, target = damage(store)
    command = _command(store_uri, target)
    repair = shlex.join(["baccarat", *command, "--overwrite"])

    status, out, err = cli("verify", "--out", store_uri)
    lines = out.splitlines()
    assert status == 1 and err == "" and damaged in lines[0]
    assert all(line.endswith(repair) for line in lines if line.startswith(f"run {target['run_id']!r}"))

    status, out, err = cli(*command)  # a plain rerun names the damage and the repair
    assert status == 1 and err.count("\n") == 1 and damaged in err and "--overwrite" in err

    status, out, err = cli(*command, "--overwrite")
    assert status == 0, err
    assert cli("verify", "--out", store_uri) == verified
    files, rows = clean
    assert _run_bytes(store, "first") == files and _run_bytes(store, "second") == before
    for table in DATA_TABLES:
        assert read_table(store_uri, "first", table).equals(rows[table])
    assert cli(*command)[1].endswith("nothing to do\n")


def delete_the_runs_log(store: Store) -> set[str]:
    """The runs table's log deleted, its row files left: verify said every log, file and contract checked
    out (0 runs), and readers saw no run; returns the runs left without a row file."""
    store.filesystem.delete_dir(store.fs_path("runs", DELTA_LOG))
    return set()


def delete_the_runs_folder(store: Store) -> set[str]:
    store.filesystem.delete_dir(store.fs_path("runs"))
    return {"first", "second"}


def delete_the_runs_log_and_a_row_file(store: Store) -> set[str]:
    delete_the_runs_log(store)
    for file in store.written_files("runs")["first"]:
        store.filesystem.delete_file(store.fs_path(file["path"]))
    return {"first"}


def _repair(line: str, parameters: dict) -> list[str]:
    """The command a verify line ends in; one dealing a run with no row file left again names its rules
    and seed RULES and SEED, which only that row held."""
    given = {"RULES": "punto_banco", "SEED": str(parameters["seed"])}
    return [given.get(word, word) for word in shlex.split(line.rpartition(": ")[2])]


@pytest.mark.parametrize("damage", [delete_the_runs_log, delete_the_runs_folder, delete_the_runs_log_and_a_row_file])
def test_runs_the_runs_table_lost_are_found_by_verify_and_repaired_as_it_says(cli, store_uri, clean, damage,
                                                                               two_runs_on_disk, tmp_path):
    store = Store.parse(store_uri)  # the module's two runs, copied (into a bucket too: dealing them there is slow)
    pafs.copy_files(str(two_runs_on_disk), store.fs_path(), destination_filesystem=store.filesystem)
    before, rows_before = _run_bytes(store, "second"), {run.run_id: run for run in read_runs(store)}
    rowless = damage(store)
    status, out, err = cli("verify", "--out", store_uri)
    lines = out.splitlines()
    assert status == 1 and err == "" and len(lines) == 2, out
    for line, parameters in zip(lines, (FIRST, SECOND)):
        assert line.startswith(f"run {parameters['run_id']!r}: the rounds and shoes tables hold its rows"), line
        assert ("no row file of it is left" in line) == (parameters["run_id"] in rowless)
        assert _repair(line, parameters) == ["baccarat", *_command(store_uri, parameters), "--overwrite"]
    other_seed = _command(store_uri, FIRST | {"seed": 99})  # not the parameters the files were dealt with
    for command in (other_seed, ["runs", "--out", store_uri], ["marts", "--out", store_uri]):
        status, out, err = cli(*command)  # no rounds dealt over the run, no run listed, no marts built
        assert (status, out, err.count("\n")) == (1, "", 1) and err.startswith("error: run 'first': "), (command, err)

    assert cli(*_repair(lines[0], FIRST)[1:])[0] == 0
    status, out, err = cli("runs", "--out", store_uri)  # a run lost beside committed ones: a warning
    warned = err.startswith("warning: run 'second': the rounds and shoes tables hold its rows") and err.count("\n") == 1
    assert status == 0 and "first" in out and (warned if "second" in rowless else err == "")
    assert cli(*_repair(lines[1], SECOND)[1:])[0] == 0
    assert cli("verify", "--out", store_uri) == (
        0, f"verified 2 runs in {store_uri}: every log, file and contract checks out\n", "")
    files, rows = clean
    assert _run_bytes(store, "first") == files and _run_bytes(store, "second") == before
    for table in DATA_TABLES:
        assert read_table(store_uri, "first", table).equals(rows[table])
    restored = {run.run_id for run in read_runs(store) if run == rows_before[run.run_id]}
    assert restored == {"first", "second"} - rowless  # a row file left is committed again, not dealt anew
    assert cli("runs", "--out", store_uri, "--json")[1].count("\n") == 2
    assert cli("marts", "--run-id", "first", "--out", store_uri, "--warehouse", tmp_path / "warehouse.duckdb")[0] == 0


def test_a_committed_row_file_deleted_is_dropped_by_the_repair_verify_names_and_its_run_dealt_again(
        cli, store_uri, clean, two_runs_on_disk):
    """No reader could read the runs table past a row file its log adds and that is gone, and the repair
    verify named failed on it too (exit 1): nothing made verify pass. The repair now drops that row first;
    the run, then one the runs table lost with no row file left, is dealt again by the same command."""
    store = Store.parse(store_uri)
    pafs.copy_files(str(two_runs_on_disk), store.fs_path(), destination_filesystem=store.filesystem)
    second = _run_bytes(store, "second")
    [row_file] = store.partition_files("runs", "first")
    store.filesystem.delete_file(store.fs_path(row_file["path"]))
    status, out, err = cli("verify", "--out", store_uri)
    assert status == 1 and err == "" and out.startswith(f"{store.location(row_file['path'])}: missing"), out
    repair = shlex.split(out.splitlines()[0].rpartition("; repair: ")[2])
    assert repair == ["baccarat", *_command(store_uri, SECOND), "--overwrite"], out  # the run with a row left
    status, out, err = cli(*repair[1:])
    assert (status, err) == (0, ""), err
    assert f"run 'first': its row file {store.location(row_file['path'])} is missing or damaged: its row is " \
           f"dropped from {store.location('runs')}" in out.splitlines()
    status, out, _ = cli("verify", "--out", store_uri)  # now a run the runs table lost, with no row file left
    assert status == 1 and out.startswith("run 'first': the rounds and shoes tables hold its rows"), out
    assert cli(*_repair(out.splitlines()[0], FIRST)[1:])[0] == 0
    assert cli("verify", "--out", store_uri) == (
        0, f"verified 2 runs in {store_uri}: every log, file and contract checks out\n", "")
    assert _run_bytes(store, "first") == clean[0] and _run_bytes(store, "second") == second


def _table_files(store: Store) -> dict[str, object]:
    """Every file of the rounds and shoes tables (data and log), with the time it was last written."""
    found = [info for table in DATA_TABLES
             for info in store.filesystem.get_file_info(pafs.FileSelector(store.fs_path(table), recursive=True))]
    return {info.path: info.mtime for info in found if info.type == pafs.FileType.File}


def test_a_plain_rerun_of_a_run_the_runs_table_lost_commits_its_row_again_from_its_row_file(cli, store_uri,
                                                                                            first_on_disk):
    """It dealt the whole run again, as when no row file is left; only `simulate --overwrite` committed the
    row again from its file."""
    store = Store.parse(store_uri)
    pafs.copy_files(str(first_on_disk), store.fs_path(), destination_filesystem=store.filesystem)
    row, tables = read_run(store, "first"), _table_files(store)
    delete_the_runs_log(store)
    status, out, err = cli(*_command(store_uri, FIRST))
    assert (status, err) == (0, ""), err
    assert out.splitlines() == [f"run 'first': its row is committed again to {store.location('runs')}",
                                f"run 'first' is already committed with these parameters in {store_uri}: nothing to do"]
    assert _table_files(store) == tables and read_run(store, "first") == row
    assert cli("verify", "--out", store_uri) == (
        0, f"verified 1 run in {store_uri}: every log, file and contract checks out\n", "")


@pytest.mark.parametrize("command", [["composition"], ["backtest", "--systems", "flat_banker"]])
def test_composition_and_backtest_of_a_run_the_runs_table_lost_name_its_repair(cli, tmp_path, first_on_disk, command):
    """They said "unknown run id 'first'" (exit 2, bad input) of a run verify names with its repair, as
    `marts --run-id first` does."""
    shutil.copytree(first_on_disk, tmp_path, dirs_exist_ok=True)
    delete_the_runs_log(Store.parse(str(tmp_path)))
    status, out, err = cli(*command, "--run-id", "first", "--out", tmp_path)
    assert (status, out, err.count("\n")) == (1, "", 1), err
    assert err.startswith("error: run 'first': the rounds and shoes tables hold its rows, and its row file"), err
    assert err.rstrip().endswith(f"repair: {shlex.join(['baccarat', *_command(str(tmp_path), FIRST), '--overwrite'])}")


def test_a_job_that_died_before_its_runs_row_is_finished_by_a_plain_rerun_as_a_scheduler_retries_it(
        cli, store_uri, clean, monkeypatch):
    command = _command(store_uri, FIRST)
    with monkeypatch.context() as patch:
        refuse_commits_of(patch, "runs")  # rounds and shoes are committed, the runs row is not
        status, _, err = cli(*command)
    assert status == 1 and err.startswith("error: run 'first' was not committed: "), err
    status, out, _ = cli("verify", "--out", store_uri)
    assert status == 1 and out.startswith("run 'first': the rounds and shoes tables hold its rows"), out
    status, _, err = cli(*_command(store_uri, SECOND | {"run_id": "first"}))
    assert status == 1 and err.startswith("error: run 'first': ") and err.count("\n") == 1, err
    assert cli(*command)[0] == 0
    assert cli("verify", "--out", store_uri)[0] == 0
    assert _run_bytes(Store.parse(store_uri), "first") == clean[0]


def test_a_damaged_mart_log_is_found_by_verify_and_repaired_by_marts(cli, tmp_path, first_on_disk):
    shutil.copytree(first_on_disk, tmp_path, dirs_exist_ok=True)
    assert cli("marts", "--out", tmp_path)[0] == 0
    entry = tmp_path / "marts" / "outcome_summary" / _commit("", 1).lstrip("/")
    entry.write_bytes(b"not a commit")
    status, out, _ = cli("verify", "--out", tmp_path)
    assert status == 1 and out.count("\n") == 1 and str(entry) in out
    assert out.rstrip().endswith(f"repair: baccarat marts --out {tmp_path}")
    before = sorted((tmp_path / "marts").rglob("*"))
    status, out, err = cli("marts", "--out", tmp_path, "--run-id", "no-such-run")  # refused: nothing set aside
    assert status == 2 and out == "" and "no-such-run" in err and sorted((tmp_path / "marts").rglob("*")) == before
    status, out, err = cli("marts", "--out", tmp_path)
    assert status == 0 and "the damaged log of" in out and err == ""
    assert cli("verify", "--out", tmp_path)[0] == 0


def test_a_damaged_rounds_log_was_reported_twice_by_verify(spark, cli, tmp_path, request):
    """Once for the table and once more for each run in it: one damaged log is one line."""
    commit_two_runs(spark, str(tmp_path), request)
    damaged, _ = corrupt_a_log_entry(Store.parse(str(tmp_path)))
    status, out, err = cli("verify", "--out", tmp_path)
    assert status == 1 and err == "" and out.count("\n") == 1 and damaged in out


@pytest.mark.parametrize("damage", [corrupt_a_log_entry, delete_a_runs_log_entry])
def test_verify_named_a_command_to_adapt_for_a_damaged_log_not_one_to_copy(spark, cli, tmp_path, damage, request):
    """'repair: baccarat simulate ... --overwrite --out OUT with the parameters of any run in it': the
    line now ends in the command of a run in the table (read from its row file when the runs log is the
    damaged one), which repairs the store as it is pasted."""
    commit_two_runs(spark, str(tmp_path), request)
    damage(Store.parse(str(tmp_path)))
    status, out, _ = cli("verify", "--out", tmp_path)
    repair = shlex.join(["baccarat", *_command(str(tmp_path), FIRST), "--overwrite"])
    assert status == 1 and out.count("\n") == 1 and out.rstrip().endswith(f"; repair: {repair}")
    assert cli(*shlex.split(repair)[1:])[0] == 0
    assert cli("verify", "--out", tmp_path)[0] == 0


def test_verify_takes_run_ids_and_json(cli, tmp_path, first_on_disk):
    shutil.copytree(first_on_disk, tmp_path, dirs_exist_ok=True)
    store = Store.parse(str(tmp_path))
    damaged, _ = truncate_a_file(store)
    status, out, _ = cli("verify", "--out", tmp_path, "--run-id", "first", "--json")
    assert status == 1 and out.count("\n") == 1 and '"runs": 1' in out and damaged in out
    status, _, err = cli("verify", "--out", tmp_path, "--run-id", "nope")
    assert status == 2 and "unknown run id 'nope'" in err and err.count("\n") == 1


def test_readers_refuse_a_damaged_run_naming_the_file_and_the_repair(cli, tmp_path, first_on_disk):
    shutil.copytree(first_on_disk, tmp_path, dirs_exist_ok=True)
    assert cli("marts", "--out", tmp_path)[0] == 0
    damaged, _ = truncate_a_file(Store.parse(str(tmp_path)))
    repair = f"repair: baccarat simulate --rules punto_banco --seed 7 --shoes {SHOES} --partitions {PARTITIONS}"
    for command in (["report", "--out", tmp_path, "--page", tmp_path / "page.html"], ["marts", "--out", tmp_path],
                    ["composition", "--run-id", "first", "--out", tmp_path]):
        status, out, err = cli(*command)
        assert status == 1 and err.count("\n") == 1 and damaged in err and repair in err, (command, err)
    assert not (tmp_path / "page.html").exists()


@pytest.mark.parametrize("removed", ["log", "folder"])
def test_a_mart_table_that_lost_its_runs_rows_is_named_by_verify_until_marts_builds_them(
        cli, two_runs_on_disk, tmp_path, removed):
    """A mart table's log (or its folder) removed by hand: verify passed, runs said 'built', and `marts
    --run-id` built that run alone there, the other run's rows lost without a word (a new user's trial)."""
    out = tmp_path / "store"
    shutil.copytree(two_runs_on_disk, out)
    assert cli("marts", "--out", out)[0] == 0
    shutil.rmtree(out / "marts" / "bet_performance" / (DELTA_LOG if removed == "log" else ""))
    status, stdout, _ = cli("verify", "--out", out)
    assert status == 1 and stdout == (f"table {out}/marts/bet_performance holds no rows of 2 runs the other marts hold, "
                                      f"such as 'first' (a build killed between its commits, or its log or folder "
                                      f"removed?); repair: baccarat marts --out {out}\n")
    assert [json.loads(line)["marts"] for line in cli("runs", "--out", out, "--json")[1].splitlines()] == [False] * 2
    assert " incomplete " in cli("runs", "--out", out)[1]
    assert cli("marts", "--out", out, "--run-id", "first")[0] == 0
    status, stdout, _ = cli("verify", "--out", out)
    assert status == 1 and "holds no rows of 1 run the other marts hold, such as 'second'" in stdout
    assert cli("marts", "--out", out)[0] == 0
    assert cli("verify", "--out", out)[0] == 0


@pytest.mark.parametrize(("mart", "removed"), [("system_edge", "log"), ("advantage_by_depth", "folder")])
def test_a_system_or_composition_mart_that_lost_a_runs_rows_is_named_by_verify_until_marts_builds_them(
        cli, two_runs_on_disk, tmp_path, mart, removed):
    """The marts built from sessions and round_ev were left out of the check above: with one of them removed
    by hand, verify passed, runs said 'built', and a warehouse published by `marts --run-id` of another run
    served system_outcomes without system_edge (a new user's trial)."""
    out = tmp_path / "store"
    shutil.copytree(two_runs_on_disk, out)
    for command in (["composition"], ["backtest", "--systems", "flat_banker,martingale_banker"]):
        assert cli(*command, "--run-id", "first", "--out", out)[0] == 0
    assert cli("marts", "--out", out)[0] == 0
    assert cli("verify", "--out", out)[0] == 0
    shutil.rmtree(out / "marts" / mart / (DELTA_LOG if removed == "log" else ""))
    status, stdout, _ = cli("verify", "--out", out)
    assert status == 1 and stdout == (f"table {out}/marts/{mart} holds no rows of 1 run the other marts hold, such as "
                                      f"'first' (a build killed between its commits, or its log or folder removed?); "
                                      f"repair: baccarat marts --out {out}\n")
    assert [json.loads(line)["marts"] for line in cli("runs", "--out", out, "--json")[1].splitlines()] == [False, True]
    assert cli("marts", "--out", out, "--run-id", "second")[0] == 0
    assert cli("verify", "--out", out)[0] == 1
    assert cli("marts", "--out", out)[0] == 0
    assert cli("verify", "--out", out)[0] == 0
