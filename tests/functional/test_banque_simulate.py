"""Baccarat banque through `baccarat simulate` (Spark): committed once, replaced only when told; the
rest of banque, which needs no Spark, is tests/unit/test_banque.py."""

from pipeline.games.banque import load_policy, player_strategies, profile_of
from pipeline.simulate.banque import WITH_REPLACEMENT, BanqueDealer
from pipeline.storage import Store
from pipeline.rule_sets import load_rule_set


def test_simulate_commits_banque_rounds_once_and_replaces_them_only_when_told(cli, tmp_path):
    out = Store.parse(str(tmp_path / "data"))
    args = ["simulate", "--rules", "banque", "--shoes", 5000, "--seed", 4, "--out", out, "--decks", "infinite",
            "--player-strategy", "banque_player_draws_at_5_with_9_11,banque_player_stands_at_5"]
    status, stdout, err = cli(*args)
    assert (status, err) == (0, "") and "committed banque run 'banque-s4-n5000'" in stdout
    rows = out.read_rows("banque_rounds").sort_by([("shoe_id", "ascending"), ("round", "ascending")])
    rule_set = load_rule_set("banque")
    prof = profile_of(rule_set, load_policy("banque_banker_maximises_expected_total"),
                      player_strategies(rule_set, "banque_player_draws_at_5_with_9_11,banque_player_stands_at_5"),
                      None)
    dealt = BanqueDealer(rule_set, prof, WITH_REPLACEMENT).deal(4, 0, 5000)
    assert rows.drop_columns(["run_id"]).equals(dealt) and rows.num_rows == 320_000  # 64 rounds per stream
    assert "nothing to do" in cli(*args)[1]
    status, _, err = cli(*args[:-2])
    assert status == 2 and err.count("\n") == 1 and "with different parameters (use --overwrite" in err
    assert out.read_rows("banque_rounds").num_rows == 320_000  # nothing written over
    status, _, _ = cli(*args[:-2], "--overwrite", "--banker-policy", "banque_banker_follows_punto_banco")
    replaced = out.read_rows("banque_rounds")
    assert status == 0 and replaced.num_rows == 320_000 and not replaced.equals(rows)
    status, _, err = cli("run", "--rules", "banque", "--out", out)
    assert status == 2 and "deal baccarat banque with `baccarat simulate --rules banque`" in err
