"""`baccarat odds`: the JSON contract, the readable table, and one-line errors."""

import json

import pytest

SHAPE_KEYS = {"rules", "decks", "total_combinations", "outcomes", "bets"}


@pytest.mark.parametrize("decks", [1, 6, 8])
@pytest.mark.parametrize("rules", ["punto_banco", "super_six", "europe"])
def test_json_has_exactly_the_documented_shape(cli, rules, decks):
    status, out, err = cli("odds", "--rules", rules, "--decks", decks, "--json")
    assert (status, err) == (0, "")
    document = json.loads(out)
    assert set(document) == SHAPE_KEYS
    assert (document["rules"], document["decks"]) == (rules, decks)
    assert isinstance(document["total_combinations"], int)
    assert set(document["outcomes"]) == {"banker", "player", "tie"}
    assert sum(o["combinations"] for o in document["outcomes"].values()) == document["total_combinations"]
    assert all(isinstance(o["combinations"], int) for o in document["outcomes"].values())
    assert sum(o["probability"] for o in document["outcomes"].values()) == pytest.approx(1, abs=1e-12)
    for bet in document["bets"].values():
        assert set(bet) == {"ev", "house_edge_pct", "sd"}
        assert bet["house_edge_pct"] == pytest.approx(-100 * bet["ev"])


def test_super_six_lists_its_bets(cli):
    document = json.loads(cli("odds", "--rules", "super_six", "--json")[1])
    assert set(document["bets"]) == {"player", "banker", "tie", "super_six", "player_pair", "banker_pair"}


def test_readable_table(cli):
    status, out, _ = cli("odds")
    assert status == 0
    assert "4,998,398,275,503,360" in out and "1.0579" in out and "14.3596" in out


def test_rules_by_path(cli, rules_file):
    status, out, _ = cli("odds", "--rules", rules_file({"name": "custom", "decks": 6}), "--json")
    assert status == 0 and json.loads(out)["decks"] == 6


BAD_ARGUMENTS = [
    (["odds", "--decks", "0"], "Invalid value for '--decks'"),
    (["odds", "--decks", "9"], "Invalid value for '--decks'"),
    (["odds", "--decks", "many"], "Invalid value for '--decks'"),
    (["odds", "--rules", "baccarat_royale"], "unknown rule set 'baccarat_royale'"),
    (["odds", "--rules", "no/such/rules.yaml"], "rule set file not found: no/such/rules.yaml"),
    (["odds", "--rules", "/etc/passwd"], "expected a mapping at the top"),
    (["odds", "--rules", ""], "rule set file not found"),
    (["odds", "--rules", "/tmp"], "rule set '/tmp' is a folder, not a YAML file"),
    (["odds", "--rules", "/dev/null"], "rule set '/dev/null' is not a regular file"),
    (["odds", "--colour"], "No such option: --colour"),
    (["fly"], "No such command 'fly'"),
]


@pytest.mark.parametrize(("args", "message"), BAD_ARGUMENTS)
def test_bad_arguments_give_one_line_and_exit_2(cli, args, message):
    status, out, err = cli(*args)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: ") and message in err


def test_bad_config_file_gives_one_line(cli, rules_file):
    status, _, err = cli("odds", "--rules", rules_file({"decks": 9}))
    assert status == 2 and err.count("\n") == 1 and "decks: Input should be less than or equal to 8" in err


def test_console_script_is_installed_and_exits_nonzero_on_bad_input():
    import subprocess

    done = subprocess.run(["baccarat", "odds", "--decks", "12"], capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr and done.stderr.count("\n") == 1


def test_one_deck_is_one_deck_not_one_decks(cli):
    status, out, _ = cli("odds", "--decks", 1)
    assert status == 0 and "1 deck:" in out and "1 decks" not in out
    status, out, _ = cli("odds", "--decks", 2)
    assert status == 0 and "2 decks:" in out


def test_a_payout_that_gives_the_player_the_edge_is_warned_about(cli, rules_file):
    generous = rules_file({"bets": {"player": {"pays": "1"}, "banker": {"pays": "0.95"}, "tie": {"pays": "10000"}}})
    status, out, err = cli("odds", "--rules", generous, "--json")
    assert status == 0 and json.loads(out)["bets"]["tie"]["ev"] > 0
    assert err.count("\n") == 1 and err.startswith("warning: tie has a positive expected value for the player")
    status, _, err = cli("odds")
    assert status == 0 and err == ""  # the shipped rule sets give the house every edge
