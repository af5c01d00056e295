"""Baccarat banque through `baccarat simulate` (Spark): committed once, replaced only when told; the
rest of banque, which needs no Spark, is tests/unit/test_banque.py."""

import json
import shlex

from pipeline.games.banque import load_policy, player_strategies, profile_of
from pipeline.rule_sets import load_rule_set
from pipeline.runs import check_run, committed_runs, read_run
from pipeline.simulate.banque import WITH_REPLACEMENT, BanqueDealer
from pipeline.storage import Store


def test_simulate_commits_banque_rounds_once_and_replaces_them_only_when_told(cli, tmp_path):
    out = Store.parse(str(tmp_path / "data"))
    args = ["simulate", "--rules", "banque", "--shoes", 1000, "--seed", 4, "--out", out, "--decks", "infinite",
            "--player-strategy", "banque_player_draws_at_5_with_9_11,banque_player_stands_at_5"]
    status, stdout, err = cli(*args)
    assert (status, err) == (0, "") and "committed banque run 'banque-s4-n1000'" in stdout
    rows = out.read_rows("banque_rounds").sort_by([("shoe_id", "ascending"), ("round", "ascending")])
    rule_set = load_rule_set("banque")
    prof = profile_of(rule_set, load_policy("banque_banker_maximises_expected_total"),
                      player_strategies(rule_set, "banque_player_draws_at_5_with_9_11,banque_player_stands_at_5"),
                      None)
    dealt = BanqueDealer(rule_set, prof, WITH_REPLACEMENT).deal(4, 0, 1000)
    assert rows.drop_columns(["run_id"]).equals(dealt) and rows.num_rows == 64_000  # 64 rounds per stream
    assert "nothing to do" in cli(*args)[1]
    status, _, err = cli(*args[:-2])
    assert status == 2 and err.count("\n") == 1 and "with different parameters (use --overwrite" in err
    assert out.read_rows("banque_rounds").num_rows == 64_000  # nothing written over
    status, _, _ = cli(*args[:-2], "--overwrite", "--banker-policy", "banque_banker_follows_punto_banco")
    replaced = out.read_rows("banque_rounds")
    assert status == 0 and replaced.num_rows == 64_000 and not replaced.equals(rows)
    status, _, err = cli("run", "--rules", "banque", "--out", out)
    assert status == 2 and "deal baccarat banque with `baccarat simulate --rules banque`" in err


def test_a_banque_run_has_its_runs_row_so_runs_lists_it_and_a_rerun_is_decided_by_it(cli, tmp_path):
    """Banque runs had no row in `runs`: `baccarat runs` did not list them, and a rerun was decided from
    the files of banque_rounds, unlike the other jobs. The one-hand readers leave them alone."""
    out = Store.parse(str(tmp_path / "data"))
    args = ["simulate", "--rules", "banque", "--shoes", 300, "--seed", 5, "--out", out, "--partitions", 2]
    status, stdout, err = cli(*args)
    assert (status, err) == (0, "") and "committed banque run 'banque-s5-n300'" in stdout
    record = read_run(out, "banque-s5-n300")
    assert record.versions == {"banque_rounds": 1} and record.partitions == 2 and record.shoes == 300
    assert record.rounds == out.read_rows("banque_rounds").num_rows
    assert sum(record.outcomes.values()) == 2 * record.rounds  # each round, two hands against the Banker
    assert record.parameters["banker_policy"]["name"] == "banque_banker_maximises_expected_total"
    assert [f.table for f in record.files] == ["banque_rounds"] * 2
    check_run(out, record)
    status, stdout, _ = cli("runs", "--out", out, "--json")
    assert status == 0 and json.loads(stdout)["versions"] == {"banque_rounds": 1}
    assert json.loads(stdout)["marts"] is None  # no marts to build: they read one-hand rounds
    assert "nothing to do" in cli(*args)[1]  # decided by its runs row
    assert committed_runs(out) == [] and committed_runs(out, "banque_rounds") == ["banque-s5-n300"]
    for command in ("composition", "backtest"):  # the backtest's line named the other readers alone
        status, _, err = cli(command, "--run-id", "banque-s5-n300", "--out", out,
                             *(["--systems", "flat_banker"] if command == "backtest" else []))
        assert status == 2 and "is a baccarat banque run" in err and err.count("\n") == 1
        assert "the composition and the backtest read one-hand rounds" in err
    assert cli("verify", "--out", out)[0] == 0


def test_a_damaged_banque_run_is_refused_naming_its_repair_and_dealt_again_with_overwrite(cli, tmp_path):
    """Banque runs are checked like the other runs: a file of another size is DamagedRun (exit 1) naming
    the banque command that deals it again, and that command repairs it."""
    out = Store.parse(str(tmp_path / "data"))
    args = ["simulate", "--rules", "banque", "--shoes", 200, "--seed", 6, "--out", out, "--partitions", 2,
            "--banker-policy", "banque_banker_follows_punto_banco"]
    assert cli(*args)[0] == 0
    record = read_run(out, "banque-s6-n200")
    damaged = tmp_path / "data" / record.files[1].path
    damaged.write_bytes(damaged.read_bytes()[:-10])
    status, _, err = cli(*args)
    assert status == 1 and err.count("\n") == 1 and "data file is" in err
    repair = err.split("; repair: ", 1)[1].strip()
    assert "--banker-policy banque_banker_follows_punto_banco" in repair and repair.endswith("--overwrite")
    status, _, err = cli(*shlex.split(repair)[1:])
    assert (status, err) == (0, "")
    assert read_run(out, "banque-s6-n200").files == record.files and cli("verify", "--out", out)[0] == 0
