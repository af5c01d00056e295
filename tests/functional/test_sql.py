"""`baccarat sql`: one query, a script on stdin, and the interactive prompt, all read-only."""

import io
import os
import pty
import select
import subprocess
import sys
import time

import duckdb
import pexpect
import pytest
from spark_jobs import simulate_with_marts

from pipeline.marts.inputs import MARTS
from pipeline.storage import WAREHOUSE


@pytest.fixture(scope="module")
def warehouse(spark, tmp_path_factory):
    out = tmp_path_factory.mktemp("sql")
    return simulate_with_marts(spark, out, seed=3, shoes=30, run_id="sql")


def test_one_query_prints_a_table(cli, warehouse):
    status, out, err = cli("sql", "--out", warehouse, "SELECT outcome, count FROM outcome_summary ORDER BY outcome")
    assert status == 0 and err == ""
    assert out.splitlines()[0] == "outcome\tcount"
    assert [line.split("\t")[0] for line in out.splitlines()[1:]] == ["B", "P", "T"]


def test_a_query_in_a_pipe_prints_every_row_and_column_whole(cli, warehouse):
    """In a pipe, DuckDB's box showed "15 columns (11 shown)", cut values with "…" and stopped at 200 rows."""
    status, out, err = cli("sql", "--out", warehouse, "SELECT * FROM rounds ORDER BY shoe_id, round")
    assert status == 0 and err == "" and "…" not in out
    header, *rows = out.splitlines()
    status, count, _ = cli("sql", "--out", warehouse, "SELECT count(*) AS n FROM rounds")
    assert len(rows) == int(count.splitlines()[1]) > 200
    assert all(len(row.split("\t")) == len(header.split("\t")) > 11 for row in rows)


@pytest.mark.parametrize(("query", "message"), [
    ("SELECT nope", 'Referenced column "nope" was not found'),
    ("SELECT * FROM bet_performanc", 'does not exist! Did you mean "bet_performance"?'),
    ("SELECT totl_net FROM bet_performance", 'Candidate bindings: "total_net"'),
    ("SELEKT 1", "Parser Error"),
    ("CREATE TABLE x AS SELECT 1", "read-only"),
    ("DROP TABLE bet_performance", "read-only"),
])
def test_bad_or_writing_queries_fail_in_one_line(cli, warehouse, query, message):
    before = (warehouse / WAREHOUSE).read_bytes()
    status, out, err = cli("sql", "--out", warehouse, query)
    assert status == 2 and out == "" and err.count("\n") == 1 and message in err
    assert (warehouse / WAREHOUSE).read_bytes() == before


def snapshot(folder) -> dict:
    return {p: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


HOSTILE = [
    ("COPY (SELECT 42) TO '{outside}/x.csv'", "COPY statements are refused"),
    ("COPY (SELECT 42) TO '{data}/rounds/x.csv'", "COPY statements are refused"),
    ("COPY rounds TO '{committed}'", "COPY statements are refused"),
    ("EXPORT DATABASE '{outside}/export'", "EXPORT statements are refused"),
    ("ATTACH '{outside}/new.duckdb' AS x (READ_WRITE)", "ATTACH statements are refused"),
    ("INSTALL httpfs", "INSTALL statements are refused"),
    ("LOAD json", "LOAD statements are refused"),
    ("SET allowed_directories = ['/']", "SET statements are refused"),
    ("SET enable_external_access = true", "SET statements are refused"),
    ("RESET lock_configuration", "RESET statements are refused"),
    ("PRAGMA enable_profiling", "PRAGMA statements are refused"),
    ("CALL pragma_version()", "CALL statements are refused"),
    ("CREATE TEMP TABLE t AS SELECT 1", "CREATE statements are refused"),
    ("SELECT 1; COPY (SELECT 1) TO '{outside}/y.csv'", "COPY statements are refused"),
    # the views' files are allowed paths, so DuckDB alone would let these write over a committed file
    ("COPY (SELECT 42) TO '{committed}' (FORMAT csv, USE_TMP_FILE false)", "COPY statements are refused"),
    ("EXPLAIN ANALYZE COPY (SELECT 42) TO '{committed}' (FORMAT csv, USE_TMP_FILE false)",
     "EXPLAIN statements are refused"),
    ("/* a note */ EXPLAIN ANALYZE COPY rounds TO '{committed}' (USE_TMP_FILE false)", "EXPLAIN statements are refused"),
    ("SELECT * FROM read_csv('/etc/passwd')", "Permission Error"),
    ("SELECT * FROM read_text('/etc/hostname')", "Permission Error"),
    ("SELECT * FROM read_blob('{data}/runs/_delta_log/00000000000000000000.json')", "Permission Error"),
    ("SELECT * FROM glob('/etc/*')", "Permission Error"),
    ("SELECT * FROM read_parquet('{outside}/*.parquet')", "Permission Error"),
]


@pytest.mark.parametrize(("statement", "message"), HOSTILE)
def test_hostile_statements_write_nothing_and_read_nothing_outside_the_data(cli, warehouse, tmp_path, statement,
                                                                            message):
    committed = next((warehouse / "rounds").rglob("part-*.parquet"))
    query = statement.format(outside=tmp_path, data=warehouse, committed=committed)
    before = snapshot(warehouse)
    status, out, err = cli("sql", "--out", warehouse, query)
    assert status == 2 and out == "" and err.count("\n") == 1 and message in err, err
    assert snapshot(warehouse) == before and list(tmp_path.iterdir()) == []


def test_every_mart_and_view_still_answers(cli, warehouse):
    for table in (*MARTS, "rounds", "shoes"):
        status, out, err = cli("sql", "--out", warehouse, f"SELECT count(*) AS n FROM {table}")
        assert status == 0 and err == "", (table, err)


@pytest.mark.parametrize("query", ["EXPLAIN SELECT count(*) FROM rounds", "explain analyze SELECT count(*) FROM shoes",
                                   "EXPLAIN (FORMAT json) SELECT * FROM bet_performance"])
def test_explaining_a_query_still_answers(cli, warehouse, query):
    status, out, err = cli("sql", "--out", warehouse, query)
    assert status == 0 and err == "" and "plan" in out


def test_no_warehouse(cli, tmp_path):
    status, _, err = cli("sql", "--out", tmp_path, "SELECT 1")
    assert status == 2 and f"no warehouse at {tmp_path / WAREHOUSE}" in err


@pytest.mark.parametrize(("content", "message"), [
    (b"", "not a valid DuckDB database file"),
    (bytes(range(256)) * 64, "not a valid DuckDB database file"),
])
def test_a_damaged_warehouse_is_a_failure_of_the_world_with_a_hint_to_publish_again(cli, tmp_path, content, message):
    """Not bad input (exit 2) with no way out: the world (1), and the command that rebuilds it."""
    (tmp_path / WAREHOUSE).write_bytes(content)
    status, out, err = cli("sql", "--out", tmp_path, "SELECT 1")
    assert status == 1 and out == "" and err.count("\n") == 1 and message in err, err
    assert f"publish it again with `baccarat marts --out OUT --warehouse {tmp_path / WAREHOUSE}`, OUT the " in err
    assert (tmp_path / WAREHOUSE).read_bytes() == content and sorted(tmp_path.iterdir()) == [tmp_path / WAREHOUSE]


def test_a_warehouse_another_process_holds_for_writing_is_one_line(warehouse, tmp_path):
    """DuckDB lets one process write a file; a reader arriving meanwhile gets one line, not a traceback."""
    locked = tmp_path / WAREHOUSE
    locked.write_bytes((warehouse / WAREHOUSE).read_bytes())
    holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys; con = duckdb.connect(sys.argv[1]); "
                               "print('held', flush=True); sys.stdin.read()", str(locked)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        done = subprocess.run(["baccarat", "sql", "--out", str(tmp_path), "SELECT count(*) FROM bet_performance"],
                              capture_output=True, text=True, timeout=60)
    finally:
        holder.communicate("")
    assert done.returncode == 1 and done.stdout == "" and done.stderr.count("\n") == 1, done.stderr
    assert "cannot be opened" in done.stderr and "another process holds it open for writing" in done.stderr


def run_sql(warehouse, stdin: str) -> subprocess.CompletedProcess:
    return subprocess.run(["baccarat", "sql", "--out", str(warehouse)], input=stdin, capture_output=True, text=True,
                          timeout=60)


def test_a_script_on_stdin_runs_every_statement(warehouse):
    done = run_sql(warehouse, "SELECT count(*) AS shoes FROM shoes;\nSELECT 6 * 7\n  AS answer;\n")
    assert done.returncode == 0 and done.stderr == ""
    assert "30" in done.stdout and "42" in done.stdout and "baccarat>" not in done.stdout


def test_a_script_s_last_statement_without_a_semicolon_was_dropped(warehouse):
    done = run_sql(warehouse, "SELECT 6 * 7 AS answer;\nSELECT count(*) AS shoes\n  FROM shoes\n")
    assert (done.returncode, done.stderr) == (0, "")
    assert "42" in done.stdout and "30" in done.stdout
    done = run_sql(warehouse, "SELECT bogus\n")
    assert done.returncode == 2 and done.stderr.startswith("error: ") and done.stderr.count("\n") == 1


def test_a_failing_statement_makes_a_script_exit_2_and_the_rest_still_runs(warehouse):
    done = run_sql(warehouse, "SELECT bogus;\nSELECT 41 + 1 AS answer;\n")
    assert done.returncode == 2
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
    assert "warehouse.duckdb (read-only): tables advantage_by_depth, bankroll_paths, bet_performance" in text
    assert "baccarat>" in text and "...>" in text
    assert "dragon" in text and "error: " in text and "lucky" in text


@pytest.mark.parametrize("leave", [".quit", ".exit", "\\q", "exit", "quit", "quit;"])
def test_every_way_to_leave_leaves(cli, warehouse, monkeypatch, leave):
    monkeypatch.setattr("sys.stdin", io.StringIO(f"SELECT 'before' AS b;\n{leave}\nSELECT 'after' AS a;\n"))
    status, out, err = cli("sql", "--out", warehouse)
    assert status == 0 and err == "" and "before" in out and "after" not in out


def test_dot_commands_in_a_script(cli, warehouse, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(".tables\n.schema streaks\n.schema nowhere\n.frobnicate\n"))
    status, out, err = cli("sql", "--out", warehouse)
    assert status == 2 and set(out.splitlines()) >= {*MARTS, "rounds", "shoes"}
    assert "expected_share" in out
    assert err.splitlines() == ["error: no table 'nowhere' (.tables lists them)",
                                "error: unknown command '.frobnicate': .tables, .schema [TABLE] or .quit"]


def test_a_query_failing_as_it_runs_is_one_line(cli, warehouse):
    """The cast fails only when rows are read, after the query was accepted."""
    status, out, err = cli("sql", "--out", warehouse, "SELECT CAST(outcome AS INTEGER) FROM rounds")
    assert status == 2 and out == "" and err.count("\n") == 1 and "Conversion Error" in err, err


PROMPT = "baccarat> "
ENDLESS = "SELECT count(*) FROM range(1000000000000) a;"  # 10**12 rows: minutes of work (10**9 take 0.5 s)


def test_the_prompt_on_a_real_terminal_lists_describes_cancels_and_saves_nothing(warehouse, tmp_path):
    home, workdir = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    workdir.mkdir()
    prompt = pexpect.spawn("baccarat", ["sql", "--out", str(warehouse)], env={**os.environ, "HOME": str(home)},
                           cwd=str(workdir), encoding="utf-8", timeout=60, dimensions=(40, 200))
    prompt.expect_exact(PROMPT)

    prompt.sendline(".tables")
    prompt.expect_exact(PROMPT)
    assert all(f"{table}\r\n" in prompt.before for table in (*MARTS, "rounds", "shoes")), prompt.before

    prompt.sendline(".schema bet_performance")
    prompt.expect_exact(PROMPT)
    with duckdb.connect(str(warehouse / WAREHOUSE), read_only=True) as con:
        columns = [name for (name,) in con.execute("SELECT column_name FROM information_schema.columns "
                                                   "WHERE table_name = 'bet_performance'").fetchall()]
    assert len(columns) > 5 and all(f" {column} " in prompt.before for column in columns), prompt.before

    prompt.sendline(ENDLESS)
    time.sleep(1)  # the query is running
    started = time.monotonic()
    prompt.sendintr()
    prompt.expect_exact("interrupted")
    prompt.expect_exact(PROMPT)
    assert time.monotonic() - started < 10
    prompt.sendline("SELECT 6 * 7 AS answer;")
    prompt.expect_exact("42")
    prompt.expect_exact(PROMPT)

    prompt.send("SELECT 'half")  # Ctrl-C on a half-typed line, then on a statement continued over lines
    prompt.expect_exact("SELECT 'half")  # echoed: the line editor is reading (a Ctrl-C before it waits for a key)
    prompt.sendintr()
    prompt.expect_exact(PROMPT)
    prompt.sendline("SELECT 1")
    prompt.expect_exact("...> ")
    prompt.sendintr()
    prompt.expect_exact(PROMPT)
    prompt.sendline("SELECT 'whole' AS w;")
    prompt.expect_exact(PROMPT)
    assert "whole" in prompt.before and "error" not in prompt.before, prompt.before
    prompt.send("\x1b[A\r")  # the up arrow recalls it from this session's history
    prompt.expect_exact(PROMPT)
    assert "whole" in prompt.before and "error" not in prompt.before, prompt.before

    prompt.sendline("\\q")
    prompt.expect(pexpect.EOF)
    prompt.close()
    assert prompt.exitstatus == 0
    assert list(home.iterdir()) == [] and list(workdir.iterdir()) == []
