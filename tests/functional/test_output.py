"""Output that is true in a pipe and a cron log: tables whole, messages that say what was done, hints
that can be pasted into a shell, and no empty folder from a command that failed before writing."""

import json
import shlex

from spark_jobs import simulate
from local_s3 import free_port

from pipeline.render import TextTable, plain

LONG_RUN_ID = "punto_banco-a-run-id-long-enough-to-be-cut-on-an-eighty-column-terminal"


def test_plain_tables_keep_every_cell_whole_and_aligned():
    table = TextTable("title", ("name", "value"), left=frozenset({"name"}))
    table.add("x" * 150, "1")
    table.add("y", "12,345")
    lines = plain(table).splitlines()
    assert lines[0] == "title"
    assert lines[2] == "x" * 150 + "       1"
    assert lines[3] == "y" + " " * 149 + "  12,345"
    assert "…" not in plain(table)


def test_runs_in_a_pipe_prints_the_whole_run_id(cli, spark, tmp_path):
    simulate(spark, tmp_path / "data", shoes=20, partitions=1, run_id=LONG_RUN_ID)
    status, out, err = cli("runs", "--out", tmp_path / "data")
    assert (status, err) == (0, "")
    assert LONG_RUN_ID in out and "…" not in out
    record = json.loads(cli("runs", "--out", tmp_path / "data", "--json")[1])
    row = next(line for line in out.splitlines() if line.startswith(LONG_RUN_ID)).split()
    assert row[1:5] == ["punto_banco", "7", "20", f"{record['rounds']:,}"]


def test_odds_of_banque_in_a_pipe_prints_the_exact_fractions_whole(cli):
    status, out, err = cli("odds", "--rules", "banque")
    assert (status, err) == (0, "")
    document = json.loads(cli("odds", "--rules", "banque", "--json")[1])
    fractions = [document["probabilities"]["hand1"]["player"], document["value"]["banker"]]
    assert all(fraction in out.split() for fraction in fractions), out
    assert "…" not in out


def test_marts_into_an_object_store_does_not_claim_views_it_did_not_make(cli, spark, tmp_path, store_uri):
    simulate(spark, store_uri, shoes=20, partitions=1)
    status, out, err = cli("marts", "--out", store_uri, "--warehouse", tmp_path / "w.duckdb",
                           "--road-cells-shoes", "2", "--road-stats-shoes", "5")
    assert status == 0, err
    published = next(line for line in out.splitlines() if line.startswith("published"))
    assert ("views of their rounds and shoes" in published) == (not store_uri.startswith("s3://"))


def test_the_query_hint_of_run_works_pasted_into_a_shell_for_a_path_with_spaces(cli, tmp_path):
    out = tmp_path / "my data"
    status, printed, err = cli("run", "--shoes", "20", "--out", out)
    assert status == 0, err
    hint = next(line for line in printed.splitlines() if "query it" in line).split("query it", 1)[1].strip()
    command = shlex.split(hint)
    assert command[:3] == ["baccarat", "sql", "--warehouse"] and command[3] == str(out / "warehouse.duckdb")
    status, rows, err = cli(*command[1:])
    assert (status, err) == (0, "") and "bet_performance" not in err and rows.strip()


def test_simulate_that_fails_before_writing_leaves_no_empty_output_folder(cli, tmp_path):
    out = tmp_path / "new" / "data"
    status, _, err = cli("simulate", "--shoes", "10", "--seed", "1", "--out", out,
                         "--master", f"spark://127.0.0.1:{free_port()}")
    assert status == 1 and "cannot reach the Spark master" in err
    assert not (tmp_path / "new").exists()


def test_simulate_that_fails_leaves_a_folder_that_was_there(cli, tmp_path):
    out = tmp_path / "data"
    out.mkdir()
    status, _, _ = cli("simulate", "--shoes", "10", "--seed", "1", "--out", out,
                       "--master", f"spark://127.0.0.1:{free_port()}")
    assert status == 1 and out.is_dir()  # an unreachable master: the world failed
