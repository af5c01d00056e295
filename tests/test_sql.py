"""`baccarat sql`: one query, a script on stdin, and the interactive prompt, all read-only."""

import os
import pty
import select
import subprocess

import pytest
from conftest import simulate

from pipeline.cli import main
from pipeline.storage import WAREHOUSE


@pytest.fixture(scope="module")
def warehouse(spark, tmp_path_factory):
    out = tmp_path_factory.mktemp("sql")
    simulate(spark, out, seed=3, shoes=30, run_id="sql")
    assert main(["marts", "--out", str(out)]) == 0
    return out


def test_one_query_prints_a_table(cli, warehouse):
    status, out, err = cli("sql", "--out", warehouse, "SELECT outcome, count FROM outcome_summary ORDER BY outcome")
    assert status == 0 and err == ""
    assert "outcome" in out and "count" in out
    assert [line.split("│")[1].strip() for line in out.splitlines() if line.startswith("│ ") and line[2] in "BPT"] == [
        "B", "P", "T"]


@pytest.mark.parametrize(("query", "message"), [
    ("SELECT nope", 'Referenced column "nope" was not found'),
    ("SELEKT 1", "Parser Error"),
    ("CREATE TABLE x AS SELECT 1", "read-only"),
    ("DROP TABLE bet_performance", "read-only"),
])
def test_bad_or_writing_queries_fail_in_one_line(cli, warehouse, query, message):
    before = (warehouse / WAREHOUSE).read_bytes()
    status, out, err = cli("sql", "--out", warehouse, query)
    assert status == 2 and out == "" and err.count("\n") == 1 and message in err
    assert (warehouse / WAREHOUSE).read_bytes() == before


def test_no_warehouse(cli, tmp_path):
    status, _, err = cli("sql", "--out", tmp_path, "SELECT 1")
    assert status == 2 and f"no warehouse at {tmp_path / WAREHOUSE}" in err


def run_sql(warehouse, stdin: str) -> subprocess.CompletedProcess:
    return subprocess.run(["baccarat", "sql", "--out", str(warehouse)], input=stdin, capture_output=True, text=True,
                          timeout=60)


def test_a_script_on_stdin_runs_every_statement(warehouse):
    done = run_sql(warehouse, "SELECT count(*) AS shoes FROM shoes;\nSELECT 6 * 7\n  AS answer;\n")
    assert done.returncode == 0 and done.stderr == ""
    assert "30" in done.stdout and "42" in done.stdout and "baccarat>" not in done.stdout


def test_a_failing_statement_makes_a_script_exit_1_and_the_rest_still_runs(warehouse):
    done = run_sql(warehouse, "SELECT bogus;\nSELECT 41 + 1 AS answer;\n")
    assert done.returncode == 1
    assert done.stderr.count("error: ") == 1 and "42" in done.stdout


def test_the_prompt_on_a_terminal(warehouse):
    controller, terminal = pty.openpty()
    process = subprocess.Popen(["baccarat", "sql", "--out", str(warehouse)], stdin=terminal, stdout=terminal,
                               stderr=terminal, start_new_session=True)
    os.close(terminal)
    os.write(controller, b"SELECT 'dragon' AS tail\n;\nSELECT bogus;\nSELECT 7 AS lucky;\n.quit\n")
    screen = b""
    while process.poll() is None or select.select([controller], [], [], 0.2)[0]:
        if select.select([controller], [], [], 0.5)[0]:
            try:
                screen += os.read(controller, 65536)
            except OSError:
                break
    os.close(controller)
    text = screen.decode()
    assert process.wait(timeout=30) == 0
    assert "warehouse.duckdb (read-only): tables bet_performance" in text
    assert "baccarat>" in text and "...>" in text
    assert "dragon" in text and "error: " in text and "lucky" in text
