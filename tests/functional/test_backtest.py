"""The backtest job and `baccarat backtest`: its sessions rows are play_session applied session after
session over the whole run's rounds (recomputed here from the committed rounds, sharing nothing with
the job but play_session), whatever the partitioning, a retried task or a rerun."""

import re
import subprocess
import sys
from dataclasses import replace
from decimal import Decimal

import pyarrow.parquet as pq
import pytest
import yaml
from cli_process import one_line_refusal, without_progress
from spark_jobs import read_table, simulate
from test_composition import flip_bytes_in_the_middle
from test_faults import environment, injected

from pipeline.backtest import job as backtest_job
from pipeline.config_files import resource
from pipeline.jobs import run_job
from pipeline.play import CHECKPOINTS, Round, play_session
from pipeline.storage import Store
from pipeline.systems import SYSTEMS_PLAYED
from pipeline.tasks import content_key, shoe_ranges

RUN = "bt"
SHOES = 120
SESSION = {"bankroll": "100", "goal": "30", "max_rounds": 40}  # short sessions: chains meet soon
SYSTEMS = ["flat_banker", "martingale_player_32", "paroli_player", "big_road_column"]
PER_SHOE = "flat_player_per_shoe"


@pytest.fixture(scope="module")
def backtested(spark, tmp_path_factory):
    """A committed run, a system whose sessions may not span shoes, and the job's plan over both."""
    out = tmp_path_factory.mktemp("backtest") / "data"
    simulate(spark, out, seed=21, shoes=SHOES, partitions=2, run_id=RUN)
    document = yaml.safe_load(resource("conf", "systems", "flat_player.yaml").read_text())
    document["name"], document["session"]["span_shoes"] = PER_SHOE, False
    per_shoe = out.parent / f"{PER_SHOE}.yaml"
    per_shoe.write_text(yaml.safe_dump(document))
    plan = backtest_job.plan_for(Store.parse(str(out)), RUN, [*SYSTEMS, str(per_shoe)], SESSION, partitions=7)
    return out, plan


def committed_sessions(out, run_id: str = RUN) -> list[dict]:
    store = Store.parse(str(out))
    rows = [row for f in store.partition_files("sessions", run_id)
            for row in pq.read_table(out / f["path"]).to_pylist()]
    return sorted(rows, key=lambda row: (row["system"], row["first_shoe"], row["first_round"]))


def reference(out, plan) -> tuple[list[dict], dict]:
    """Each system's sessions by play_session, one after another over every round of the run in order,
    as the table's rows; and each session's last shoe, by (system, first_shoe, first_round)."""
    rounds = read_table(out, RUN, "rounds").sort(["shoe_id", "round"]).to_dicts()
    rows, last_shoes = [], {}
    for system in plan.systems:
        played = [Round(r["shoe_id"], r["outcome"], {kind: r[f"net_{kind}"] for kind in system.sides}) for r in rounds]
        position = 0
        while position < len(played):
            result = play_session(system, played[position:], played[:position])
            first = rounds[position]
            key = (system.name, first["shoe_id"], first["round"])
            last_shoes[key] = rounds[position + result.rounds - 1]["shoe_id"]
            rows.append(_row(key, result))
            position += result.rounds
    return sorted(rows, key=lambda row: (row["system"], row["first_shoe"], row["first_round"])), last_shoes


def _row(key: tuple, result) -> dict:
    complete = result.ended != "incomplete"
    return {"system": key[0], "first_shoe": key[1], "first_round": key[2], "start_bankroll": result.start,
            "end_bankroll": result.end, "net": result.net, "wagered": result.wagered,
            "wagered_banker": result.wagered_on.get("banker", Decimal(0)),
            "wagered_player": result.wagered_on.get("player", Decimal(0)), "rounds": result.rounds,
            "stakes": result.stakes, "max_drawdown": result.max_drawdown, "ended": result.ended,
            "table_max_hits": result.table_max_hits,
            **{f"bankroll_after_{n}": value if complete else None for n, value in zip(CHECKPOINTS, result.after)}}


def test_sessions_are_play_session_over_the_whole_run_whatever_the_partitions(spark, backtested):
    out, plan = backtested
    expected, last_shoes = reference(out, plan)
    for partitions in (7, 3, 1):
        run_job(spark, replace(plan, partitions=partitions))
        assert committed_sessions(out) == expected, partitions
    boundaries = [first for first, _ in shoe_ranges(SHOES, 7)][1:]
    straddling = [key for key, last in last_shoes.items() if any(key[1] < b <= last for b in boundaries)]
    assert any(key[0] != PER_SHOE for key in straddling)  # a session began in one task's range, ended in the next
    endings = {row["ended"] for row in expected}
    assert {"goal", "max_rounds", "shoe_end", "incomplete"} <= endings
    assert all(row["ended"] == "incomplete" for row in expected if row["bankroll_after_10"] is None)


@pytest.mark.parametrize("session,partitions", [({"bankroll": "100000", "goal": "100000", "max_rounds": 30}, 7),
                                                (SESSION, 20)], ids=["chains_never_meet", "tiny_ranges"])
def test_ranges_guessing_their_first_session_wrong_give_the_rows_of_one_range(spark, backtested, session, partitions):
    """A task guesses where its first session begins from one shoe before its range: where sessions
    nearly always run to their round limit the guessed chains never meet the true one, and tiny ranges
    (six shoes) hold few sessions to meet it in; the ranges guessed wrong are written again from their
    true entries."""
    out, _ = backtested
    plan = backtest_job.plan_for(Store.parse(str(out)), RUN, SYSTEMS, session, partitions=1)
    run_job(spark, plan)
    one_range = committed_sessions(out)
    stages = []
    result = run_job(spark, replace(plan, partitions=partitions, lookback_sessions=1),
                     on_again=lambda shoes: stages.append(shoes) or (lambda shoes_done, rows_done: None))
    assert result["partitions"] == partitions and committed_sessions(out) == one_range
    assert len(stages) > 1, "ranges guessed wrong were played again in one stage at most: the case is not exercised"


def test_the_commit_records_each_system_s_unit_and_bet_as_played_for_the_marts(spark, backtested):
    """The marts took a shipped system's unit and bet from its file as it was when they were built: an edit
    after the backtest counted its sessions' drawdowns in the new unit (tests/unit/test_systems_as_played.py)."""
    out, plan = backtested
    run_job(spark, plan)
    played = Store.parse(str(out)).commit_record("sessions", RUN, SYSTEMS_PLAYED)
    assert played["flat_banker"] == {"unit": "10", "bet": "banker"}
    assert played["big_road_column"] == {"unit": "10", "bet": None} and set(played) == {*SYSTEMS, PER_SHOE}


def test_a_range_played_again_played_every_system_where_only_some_were_guessed_wrong(spark, backtested, monkeypatch):
    """The stage playing ranges again played every system of each range; now it plays the systems whose
    entries were wrong and keeps the others' rows from the range's first file. The tasks run in this
    process here, so that what each plays can be seen; the rows are those of one range."""
    out, _ = backtested
    plan = backtest_job.plan_for(Store.parse(str(out)), RUN, SYSTEMS, SESSION, partitions=1)
    run_job(spark, plan)
    one_range = committed_sessions(out)
    played, kept, real_play_range = [], [], backtest_job.play_range
    monkeypatch.setattr(backtest_job, "play_range",
                        lambda system, *rest: played.append(system.name) or real_play_range(system, *rest))

    def write(job_plan, ranges):
        results = []
        for first, last in ranges:
            before = len(played)
            results.append(backtest_job.write_range(job_plan, first, last))
            if first in job_plan.kept:  # a range played again
                assert played[before:] == [system.name for system in job_plan.systems
                                           if system.name in job_plan.entries[first]]
                assert set(played[before:]) | set(job_plan.kept[first].systems) == set(SYSTEMS)
                kept.extend(job_plan.kept[first].systems)
        return results

    tiny = replace(plan, partitions=40, lookback_sessions=1)
    settled = backtest_job.settled(tiny, write(tiny, tiny.ranges()), write)
    assert kept, "no range played again kept a system's rows: the test's guesses no longer mix right and wrong"
    rows = [row for result in settled for row in pq.read_table(out / result["files"][0]["path"]).to_pylist()]
    assert sorted(rows, key=lambda row: (row["system"], row["first_shoe"], row["first_round"])) == one_range


def test_a_kept_file_that_changed_since_its_task_wrote_it_fails_the_task(spark, backtested):
    """The rows a range played again keeps are counted against what its task reported: an OSError, which
    the job turns into its one line (tasks.collect_or_fail)."""
    out, _ = backtested
    plan = replace(backtest_job.plan_for(Store.parse(str(out)), RUN, SYSTEMS[:1], SESSION, partitions=4),
                   lookback_sessions=1)
    first, last = plan.ranges()[1]
    written = backtest_job.write_range(plan, first, last)
    name = SYSTEMS[0]
    summary = dict(written["summaries"][name], endings=[*written["summaries"][name]["endings"][:-1], 10**6])
    kept = backtest_job.Kept(written["files"][0]["path"],
                             {name: (written["entries"][name], written["exits"][name], summary)})
    with pytest.raises(OSError, match=f"changed while the backtest ran: it holds .* sessions of '{name}'"):
        backtest_job.write_range(replace(plan, entries={first: {}}, kept={first: kept}), first, last)


def test_the_stage_playing_ranges_again_reports_its_progress(spark, backtested):
    """The ranges guessed wrong are played again in a stage of their own, whose progress the driver
    hears through run_job's on_again as the first stage's through on_progress."""
    out, _ = backtested
    plan = backtest_job.plan_for(Store.parse(str(out)), RUN, SYSTEMS[:1],
                                 {"bankroll": "100000", "goal": "100000", "max_rounds": 30}, partitions=7)
    stages = []

    def on_again(shoes: int):
        heard = []
        stages.append((shoes, heard))
        return lambda shoes_done, rows_done: heard.append(shoes_done)

    run_job(spark, replace(plan, lookback_sessions=1), on_again=on_again)
    assert stages, "no range was played again: the test's sessions no longer make the guesses wrong"
    first_range = shoe_ranges(SHOES, 7)[0]
    for shoes, heard in stages:  # the first range is never played again: its entry is the run's first round
        assert 0 < shoes <= SHOES - (first_range[1] - first_range[0])
        assert heard and heard[-1] == shoes and heard == sorted(heard)


def test_the_last_session_of_each_system_is_incomplete_and_out_of_the_summary(spark, backtested, cli):
    out, _ = backtested
    status, printed, err = cli("backtest", "--run-id", RUN, "--out", out, "--systems", "flat_banker,paroli_player",
                               "--bankroll", "100", "--goal", "30", "--max-rounds", 40, "--partitions", 2)
    assert status == 0 and err == "", err
    rows = committed_sessions(out)
    assert {row["system"] for row in rows} == {"flat_banker", "paroli_player"}  # the run's earlier rows are replaced
    for system in ("flat_banker", "paroli_player"):
        mine = [row for row in rows if row["system"] == system]
        assert mine[-1]["ended"] == "incomplete" and all(row["ended"] != "incomplete" for row in mine[:-1])
        complete = [row for row in mine if row["ended"] != "incomplete"]
        line = next(line for line in printed.splitlines() if line.startswith(system))
        assert line.split()[1] == f"{len(mine):,}" and line.split()[-2] == "1"  # sessions; incomplete
        edge = sum(row["net"] for row in complete) / sum(row["wagered"] for row in complete)
        assert line.split()[-1] == f"{edge:.4%}"
    assert f"committed sessions of run {RUN!r}: {len(rows):,} sessions" in printed


def test_a_rerun_is_nothing_to_do_and_adds_no_version(backtested, cli):
    out, _ = backtested
    args = ("backtest", "--run-id", RUN, "--out", out, "--systems", "martingale_player_32", "--bankroll", "100",
            "--goal", "30", "--max-rounds", 40)
    assert cli(*args)[0] == 0
    version = Store.parse(str(out)).delta_table("sessions").version()
    status, printed, err = cli(*args, "--partitions", 5)
    assert status == 0 and err == "" and "nothing to do" in printed
    assert Store.parse(str(out)).delta_table("sessions").version() == version


def test_the_same_systems_in_another_order_are_nothing_to_do(backtested, cli):
    """`--systems a,b` then `--systems b,a` played the whole run again, rows equal, and took the run's
    system marts with it (and a warehouse published again without them)."""
    out, _ = backtested
    args = ("backtest", "--run-id", RUN, "--out", out, "--bankroll", "100", "--goal", "30", "--max-rounds", 40)
    assert cli(*args, "--systems", "paroli_player,flat_banker")[0] == 0
    version = Store.parse(str(out)).delta_table("sessions").version()
    status, printed, err = cli(*args, "--systems", "flat_banker,paroli_player")
    assert status == 0 and err == "" and "nothing to do" in printed, printed + err
    assert Store.parse(str(out)).delta_table("sessions").version() == version


def test_sessions_played_under_earlier_rules_of_a_session_are_not_taken_as_done(backtested, monkeypatch):
    """A backtest made before the rules of a session changed (roads restarted with each session, not each
    shoe) was taken as done by the same command after, its rows kept: its files' content key, which a rerun
    compares, now holds the rules' version (a key that differs plays the sessions again: the reruns above)."""
    _, plan = backtested
    now = content_key(plan.parameters())
    monkeypatch.setattr(backtest_job, "SESSION_RULES_VERSION", backtest_job.SESSION_RULES_VERSION - 1)
    assert content_key(plan.parameters()) != now


@pytest.mark.slow
def test_a_task_failing_its_first_attempt_changes_nothing_and_the_retry_gives_the_same_rows(spark, backtested,
                                                                                           tmp_path):
    """Every task raises mid-write on its attempt 0 (tests/seams/sitecustomize.py); local[2,2] retries it."""
    out, plan = backtested
    run_job(spark, replace(plan, systems=plan.systems[:2], partitions=2))
    expected = committed_sessions(out)
    run_job(spark, replace(plan, systems=plan.systems[2:3], partitions=2))  # other rows, so the command has work
    store = Store.parse(str(out))
    version = store.delta_table("sessions").version()
    logs = tmp_path / "logs"
    done = subprocess.run(
        [sys.executable, "-m", "pipeline.cli", "backtest", "--run-id", RUN, "--out", str(out), "--systems",
         ",".join(system.name for system in plan.systems[:2]), "--bankroll", "100", "--goal", "30", "--max-rounds", "40", "--master", "local[2,2]",
         "--partitions", "3"], capture_output=True, text=True, timeout=300, cwd=tmp_path,
        env=environment(BACCARAT_LOG_DIR=str(logs), **injected("first-attempt")))
    assert done.returncode == 0 and without_progress(done.stderr) == "", done.stderr[-3000:]
    [log] = logs.iterdir()
    assert len(set(re.findall(r"injected fault: first attempt of the task for shoes (\d+-\d+)", log.read_text()))) == 3
    assert committed_sessions(out) == expected and store.delta_table("sessions").version() == version + 1
    folder = out / "sessions" / f"run_id={RUN}"
    assert not [p.name for p in folder.iterdir() if p.name.startswith(".") or ".tmp" in p.name]


@pytest.mark.parametrize("args,message", [
    (["--run-id", "nope", "--systems", "flat_banker"], "nope"),
    (["--run-id", RUN, "--systems", "no_such_system"], "no_such_system"),
    (["--run-id", RUN, "--systems", "flat_banker", "--goal", "0"], "--goal 0: Input should be greater than 0"),
    (["--run-id", RUN, "--systems", "flat_banker", "--bankroll", "5"], "cannot cover one stake"),
    (["--run-id", RUN, "--systems", "flat_banker,flat_banker"], "given twice"),
    (["--run-id", RUN, "--systems", ","], "an empty name"),
    (["--run-id", RUN, "--systems", "flat_banker", "--max-rounds", "0"], "--max-rounds 0: Input should be"),
])
def test_bad_input_is_one_line_and_writes_nothing(backtested, cli, args, message):
    out, _ = backtested
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    one_line_refusal(*cli("backtest", "--out", out, *args), message)
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before


@pytest.mark.parametrize("systems", ["flat_banker,,paroli_player", "flat_banker,", " ,flat_banker"])
def test_an_empty_system_name_between_commas_is_bad_input_not_ignored(backtested, cli, systems):
    out, _ = backtested
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    one_line_refusal(*cli("backtest", "--out", out, "--run-id", RUN, "--systems", systems), "an empty name")
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before


@pytest.mark.parametrize("changes,message", [
    ({"colour": "red"}, "colour"),
    ({"unit": "-10"}, "unit"),
    ({"table": {"minimum": "1", "maximum": "5"}}, "table maximum 5 is below the unit 10"),
    ({"session": {"bankroll": "1000", "goal": "200"}, "unit": "10", "table": {"minimum": "10", "maximum": "5000"},
      "progression": {"kind": "flat"}, "name": "unbounded"}, "max_rounds"),
    ({"bet": "tie", "table": {"minimum": "10", "maximum": "1000000000000"}, "name": "huge_tie"},  # test_session_totals.py
     "could take its totals past decimal128(18, 2)"),
])
def test_a_bad_system_file_is_one_line_and_writes_nothing(backtested, cli, tmp_path, changes, message):
    out, _ = backtested
    document = yaml.safe_load(resource("conf", "systems", "flat_banker.yaml").read_text()) | changes
    path = tmp_path / "system.yaml"
    path.write_text(yaml.safe_dump(document))
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    one_line_refusal(*cli("backtest", "--out", out, "--run-id", RUN, "--systems", path), message)
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before


def test_simulate_overwrite_removes_the_replaced_runs_sessions_rows(spark, backtested, cli):
    out, _ = backtested
    simulate(spark, out, seed=31, shoes=3, partitions=1, run_id="replaced")
    simulate(spark, out, seed=32, shoes=3, partitions=1, run_id="kept")
    for run_id in ("replaced", "kept"):
        assert cli("backtest", "--run-id", run_id, "--out", out, "--systems", "flat_banker", "--max-rounds", 20)[0] == 0
    status, printed, err = cli("simulate", "--shoes", 2, "--seed", 33, "--out", out, "--run-id", "replaced",
                               "--overwrite", "--partitions", 1)
    assert status == 0 and "its betting-system sessions are removed" in printed, err
    assert committed_sessions(out, "replaced") == [] and committed_sessions(out, "kept")
    status, printed, err = cli("backtest", "--run-id", "replaced", "--out", out, "--systems", "flat_banker",
                               "--max-rounds", 20)
    assert status == 0 and "nothing to do" not in printed, err
    assert {row["first_shoe"] for row in committed_sessions(out, "replaced")} <= {0, 1}


def truncate(path) -> None:
    path.write_bytes(path.read_bytes()[:100])


@pytest.mark.parametrize("damage", [truncate, flip_bytes_in_the_middle])
def test_a_damaged_sessions_file_is_found_by_verify_and_written_again_by_the_same_backtest(backtested, cli, damage):
    """Truncated, or damaged in place (the same size, the same footer: its SHA-256 fails the one its commit
    recorded)."""
    out, _ = backtested
    args = ("backtest", "--run-id", RUN, "--out", out, "--systems", "flat_banker", "--max-rounds", 20,
            "--partitions", 2)
    assert cli(*args)[0] == 0
    before = committed_sessions(out)
    damaged = out / Store.parse(str(out)).partition_files("sessions", RUN)[0]["path"]
    damage(damaged)
    status, printed, _ = cli("verify", "--out", out)
    assert status == 1 and str(damaged) in printed
    assert f"repair: baccarat backtest --run-id {RUN} --out {out} --systems flat_banker --max-rounds 20\n" in printed
    status, printed, err = cli(*args)
    assert status == 0 and "nothing to do" not in printed, err
    assert committed_sessions(out) == before
    assert cli("verify", "--out", out)[0] == 0


def test_a_truncated_sessions_file_made_marts_exit_2(backtested, cli, tmp_path):
    """Damaged committed data is a failure of the world: marts exits 1 in one line naming the file and
    the repair, as for a truncated rounds file, and verify says the same."""
    out, _ = backtested
    args = ("backtest", "--run-id", RUN, "--out", out, "--systems", "flat_banker", "--max-rounds", 20,
            "--partitions", 2)
    assert cli(*args)[0] == 0
    damaged = out / Store.parse(str(out)).partition_files("sessions", RUN)[0]["path"]
    damaged.write_bytes(damaged.read_bytes()[:100])
    status, printed, err = cli("marts", "--out", out, "--run-id", RUN, "--warehouse", tmp_path / "w.duckdb")
    assert (status, printed, err.count("\n")) == (1, "", 1)
    line = err.removeprefix("error: ").strip()
    assert str(damaged) in line
    assert line.endswith(f"; repair: baccarat backtest --run-id {RUN} --out {out} --systems flat_banker --max-rounds 20")
    assert line in cli("verify", "--out", out)[1].splitlines()
    assert cli(*args)[0] == 0 and cli("verify", "--out", out)[0] == 0
