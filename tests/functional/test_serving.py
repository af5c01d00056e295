"""Serving analysts safely (docs/serving.md): what readers of the published warehouse see no client can
change, every reader's query has bounds, statements that act are refused by name and the queries analysts
write are answered, the views follow a data folder that moves, and publishing fails in one line."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from cli_process import on_a_full_disk
from spark_jobs import simulate_with_marts
from venv_cache import cached_venv

from pipeline.marts.publish import PUBLISHES
from pipeline.report import build_report
from pipeline.storage import WAREHOUSE, Store

REPOSITORY = Path(__file__).resolve().parents[2]
ENDLESS = "SELECT count(*) FROM range(1000000000000)"
TRUE_EV = "SELECT max(ev) < 1 FROM bet_performance"


@pytest.fixture(scope="module")
def published(spark, tmp_path_factory):
    out = tmp_path_factory.mktemp("serving")
    return simulate_with_marts(spark, out, seed=11, shoes=30, run_id="serving")


@pytest.fixture
def data(published, tmp_path) -> Path:
    """A copy of the data folder of its own (the warehouse's link stays a link)."""
    shutil.copytree(published, tmp_path / "data", symlinks=True)
    return tmp_path / "data"


def baccarat(*args, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(["baccarat", *map(str, args)], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


@pytest.fixture
def baccarat_here(cli, monkeypatch):
    """`baccarat ARGS` in the test's process, as baccarat() gives it, `env` set for the call: for the tests
    of what a command answers (bounds, bad input, a moved folder), where its process is not what is tested."""
    def run(*args, env: dict | None = None) -> subprocess.CompletedProcess:
        with monkeypatch.context() as patch:
            for name, value in (env or {}).items():
                patch.setenv(name, value)
            status, out, err = cli(*args)
        return subprocess.CompletedProcess(["baccarat", *map(str, args)], status, out, err)

    return run


def engine(path: Path, query: str = "") -> sa.Engine:
    return sa.create_engine(f"duckdb+baccarat:///{path}{query}", poolclass=sa.pool.NullPool)


def journals(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.wal"))


# ------------------------------------------------------------------ no client can poison the warehouse

def test_a_client_writing_through_a_replaced_warehouse_changes_nothing_readers_see(cli, data, tmp_path):
    """The reproduction: a client opens the warehouse read-write, `baccarat marts` publishes a new one,
    the client updates a mart and is killed; and a journal such a client leaves at the warehouse's path
    (DuckDB 1.x writes it beside the path it opened). `baccarat sql`, the report and the BI dialect
    read what the pipeline published, and the next publish leaves no journal behind."""
    page_before = build_report(Store.parse(str(data)), target=tmp_path / "before.html").read_bytes()
    client = subprocess.Popen(
        [sys.executable, "-c", "import duckdb, sys\ncon = duckdb.connect(sys.argv[1])\nprint('open', flush=True)\n"
         "sys.stdin.readline()\ncon.execute('UPDATE bet_performance SET ev = 99')\nprint('written', flush=True)\n"
         "sys.stdin.readline()", str(data / WAREHOUSE)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert client.stdout.readline().strip() == "open"
        assert cli("marts", "--out", data)[0] == 0
        client.stdin.write("\n")
        client.stdin.flush()
        client.stdout.readline()  # "written", or nothing: DuckDB 2.0 keeps the journal beside the removed file
    finally:
        client.kill()  # as kill -9: a journal stays where it was written
        client.wait()
    plant_a_journal(data / WAREHOUSE, tmp_path)
    done = baccarat("sql", "--out", data, TRUE_EV)
    assert done.returncode == 0 and "true" in done.stdout and done.stderr == "", done.stderr
    assert build_report(Store.parse(str(data)), target=tmp_path / "after.html").read_bytes() == page_before
    with engine(data / WAREHOUSE).connect() as connection:
        assert connection.exec_driver_sql(TRUE_EV).scalar() is True
    assert cli("marts", "--out", data)[0] == 0
    assert journals(data) == []


def plant_a_journal(stable: Path, scratch: Path) -> None:
    """A journal setting ev = 99, at `stable`'s path, written by a client of a copy of the published file."""
    copy = scratch / "copy.duckdb"
    shutil.copy(stable, copy)
    copy.chmod(0o644)
    subprocess.run([sys.executable, "-c", "import duckdb, os, sys\ncon = duckdb.connect(sys.argv[1])\n"
                    "con.execute('UPDATE bet_performance SET ev = 99')\nos._exit(0)", str(copy)], check=True, timeout=60)
    poisoned = subprocess.run([sys.executable, "-c", "import duckdb, sys\nprint(duckdb.connect(sys.argv[1], "
                               "read_only=True).execute('SELECT max(ev) FROM bet_performance').fetchone()[0])",
                               str(copy)], capture_output=True, text=True, timeout=60)
    assert poisoned.stdout.strip() == "99.0"  # what the journal makes a reader that replays it see
    shutil.move(copy.with_name(copy.name + ".wal"), stable.with_name(stable.name + ".wal"))


def test_a_journal_beside_the_published_file_is_refused_not_replayed(data):
    """A client that opened the published file itself read-write and was killed leaves its journal there:
    readers say so in one line and replay nothing; publishing again clears it."""
    published = (data / WAREHOUSE).resolve()
    published.chmod(0o644)  # a client able to write it: its owner, or root
    write_as_a_client(published, "con.execute('UPDATE bet_performance SET ev = 99')\nos._exit(0)")
    assert journals(data) == [published.with_name(published.name + ".wal")]
    readers_refuse_until_published_again(data, "journal")
    assert journals(data) == []


def test_each_publish_is_a_read_only_file_of_its_own_and_the_older_ones_go(cli, data):
    first = (data / WAREHOUSE).resolve()
    assert cli("marts", "--out", data)[0] == 0
    second = (data / WAREHOUSE).resolve()
    folder = data / (WAREHOUSE + PUBLISHES)
    assert (data / WAREHOUSE).is_symlink() and second != first and second.parent.parent == folder
    sealed = second.with_name(second.name + ".sha256")
    assert sorted(folder.rglob("*")) == [second.parent, second, sealed] and second.stat().st_mode & 0o222 == 0


def test_a_published_file_a_root_client_changed_and_closed_cleanly_is_refused(data):
    """Mode 0444 stops no root client, and a clean close folds its journal into the file, so no journal
    was left to see: the publish's recorded SHA-256 shows the change."""
    published = (data / WAREHOUSE).resolve()
    write_as_a_client(published, "con.execute('DELETE FROM bet_performance')\ncon.close()")
    assert journals(data) == []
    readers_refuse_until_published_again(data, "changed after it was published")


def write_as_a_client(published: Path, script: str) -> None:
    """A DuckDB client in a process of its own that opens the published file read-write and runs `script`."""
    writer = subprocess.run([sys.executable, "-c", f"import duckdb, os, sys\ncon = duckdb.connect(sys.argv[1])\n"
                             f"{script}", str(published)], capture_output=True, text=True, timeout=60)
    assert writer.returncode == 0, writer.stderr


def readers_refuse_until_published_again(data: Path, why: str) -> None:
    """`baccarat sql` and the BI dialect refuse the warehouse in one line saying `why` (exit 1), and
    `baccarat marts` publishes it whole again."""
    done = baccarat("sql", "--out", data, TRUE_EV)
    assert done.returncode == 1 and done.stdout == "" and done.stderr.count("\n") == 1
    assert why in done.stderr and f"baccarat marts --out OUT --warehouse {data / WAREHOUSE}`" in done.stderr
    with pytest.raises(sa.exc.DBAPIError, match=why):
        engine(data / WAREHOUSE).connect()
    assert baccarat("marts", "--out", data).returncode == 0
    assert "true" in baccarat("sql", "--out", data, TRUE_EV).stdout


# ------------------------------------------------------------------ bounds

def test_a_runaway_query_is_stopped_at_the_timeout_in_one_line(published, baccarat_here):
    started = time.monotonic()
    done = baccarat_here("sql", "--out", published, "--timeout", "1", ENDLESS)
    assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1, done.stderr
    assert "stopped after 1 s" in done.stderr and time.monotonic() - started < 60
    by_environment = baccarat_here("sql", "--out", published, ENDLESS, env={"BACCARAT_SQL_TIMEOUT": "1"})
    assert by_environment.returncode == 2 and "stopped after 1 s" in by_environment.stderr


def test_the_prompt_goes_on_after_a_statement_over_its_time(published):
    done = subprocess.run(["baccarat", "sql", "--out", str(published), "--timeout", "1"],
                          input=f"{ENDLESS};\nSELECT 6 * 7 AS answer;\n", capture_output=True, text=True, timeout=120)
    # the script's status is its first failure's: a statement over its time is 2, as given as the argument
    assert done.returncode == 2 and "stopped after 1 s" in done.stderr and "42" in done.stdout


# One call of a function over a 3 GB value: DuckDB folds it as it plans the query, deaf to interrupts, for
# 30 s and more; the query then ended in success, its answer printed past the timeout (status 0).
ONE_LONG_CALL = "SELECT length(repeat('x', 3000000000)) AS n"
LONG_CALL_MEMORY = "4GB"  # room for the value: only the time stops it


def test_a_query_deaf_to_interrupts_ends_at_its_timeout_with_nothing_printed(published):
    started = time.monotonic()
    done = baccarat("sql", "--out", published, "--timeout", "1", "--memory-limit", LONG_CALL_MEMORY, ONE_LONG_CALL)
    assert (done.returncode, done.stdout, done.stderr.count("\n")) == (2, "", 1), done
    assert "stopped after 1 s" in done.stderr and time.monotonic() - started < 25


def test_ctrl_c_during_a_query_deaf_to_interrupts_ends_it_in_seconds(published):
    query = subprocess.Popen(["baccarat", "sql", "--out", str(published), "--memory-limit", LONG_CALL_MEMORY,
                              ONE_LONG_CALL], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    while threads(query.pid) < 10 and query.poll() is None:  # DuckDB's threads: the imports are over
        time.sleep(0.2)
    time.sleep(1)
    query.send_signal(signal.SIGINT)
    signalled = time.monotonic()
    out, err = query.communicate(timeout=120)
    assert (query.returncode, out, err) == (130, "", "error: interrupted\n")
    assert time.monotonic() - signalled < 20


# Reports the largest RSS of the command it runs, its only child, in kB, and exits with its status.
LARGEST_RSS = ("import resource, subprocess, sys; status = subprocess.run(sys.argv[1:]).returncode; "
               "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); sys.exit(status)")


def test_one_huge_value_is_held_to_the_memory_limit(published):
    """DuckDB's memory limit counts what its buffer manager hands out, not one value: a 4 GB string took
    7.9 GB under the 2 GB default. The process's data is capped (pipeline/marts/shell.py, memory_capped)."""
    done = subprocess.run([sys.executable, "-c", LARGEST_RSS, "baccarat", "sql", "--out", str(published),
                           "SELECT length(repeat('x', 4000000000)) AS n"], capture_output=True, text=True, timeout=300)
    *error, largest_kb = done.stderr.splitlines()
    assert (done.returncode, done.stdout, len(error)) == (2, "", 1) and "Out of Memory" in error[0], done
    assert int(largest_kb) * 1024 < 2 * 10**9



def test_rows_too_big_for_python_within_the_cap_are_one_line_and_print_nothing(published):
    """Rows that DuckDB and Arrow hold within the cap, and that do not fit as Python values: one line (exit
    2) that says so, and nothing on stdout, as for a query that fails on its first rows (a header alone
    read as an empty result)."""
    done = baccarat("sql", "--out", published, "--memory-limit", "300MB", "SELECT repeat('x', 40000) AS s FROM range(10000)")
    assert (done.returncode, done.stdout, done.stderr.count("\n")) == (2, "", 1), done
    assert "rows do not fit in its memory limit, 300,000,000 bytes (--memory-limit)" in done.stderr

SETTINGS = ("SELECT current_setting('threads') AS t, current_setting('memory_limit') AS m, "
            "current_setting('max_temp_directory_size') AS s, current_setting('temp_directory') AS d")


def test_each_bound_from_the_command_line_and_the_environment(published, tmp_path, baccarat_here):
    spill = tmp_path / "spill"
    given = baccarat_here("sql", "--out", published, "--threads", "1", "--memory-limit", "300MB",
                          "--temp-directory", spill, "--max-temp-directory-size", "1GB", SETTINGS)
    assert given.returncode == 0, given.stderr
    header, row = given.stdout.splitlines()
    assert header == "t\tm\ts\td" and row.split("\t")[:3] == ["1", "286.1 MiB", "953.6 MiB"]
    assert row.split("\t")[3].startswith(f"{spill}/")  # a folder of its own in the one given
    defaults = baccarat_here("sql", "--out", published, SETTINGS, env={"BACCARAT_SQL_THREADS": "1"})
    threads, memory, _, spill = defaults.stdout.splitlines()[1].split("\t")
    assert defaults.returncode == 0 and (threads, memory) == ("1", "1.8 GiB")
    assert str(published) not in spill  # the spill goes outside the data


def test_a_query_over_its_memory_is_one_line(published, baccarat_here):
    done = baccarat_here("sql", "--out", published, "--memory-limit", "20MB", "--max-temp-directory-size", "1MB",
                         "SELECT count(DISTINCT range) FROM range(100000000)")
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "Out of Memory" in done.stderr, done.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["--timeout", "0"], "positive number"),
    (["--memory-limit", "lots"], "a size such as 2GB"),
    (["--threads", "0"], "positive whole number"),
    (["--temp-directory", "{data}/spill"], "inside the data"),
])
def test_bad_bounds_are_one_line(published, args, message, baccarat_here):
    done = baccarat_here("sql", "--out", published, *[a.format(data=published) for a in args], "SELECT 1")
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and message in done.stderr, done.stderr


def test_a_bi_connection_stops_a_runaway_query_and_stays_usable(published):
    with engine(published / WAREHOUSE, "?timeout=1").connect() as connection:
        started = time.monotonic()
        with pytest.raises(sa.exc.DBAPIError, match="stopped after 1 s"):
            connection.exec_driver_sql(ENDLESS)
        assert time.monotonic() - started < 60
        connection.rollback()  # as after any failed statement in SQLAlchemy
        assert connection.exec_driver_sql("SELECT 6 * 7").scalar() == 42


def test_a_bi_uri_tightens_the_bounds(published):
    with engine(published / WAREHOUSE, "?threads=1&memory_limit=1GB").connect() as connection:
        threads, memory = connection.exec_driver_sql(
            "SELECT current_setting('threads'), current_setting('memory_limit')").one()
    assert (threads, memory) == (1, "953.6 MiB")


@pytest.mark.parametrize(("query", "message"), [
    ("?memory_limit=100GB", "memory_limit can only be tightened"),
    ("?timeout=100000", "timeout can only be tightened"),
    ("?temp_directory=/tmp", "not temp_directory"),
])
def test_a_bi_uri_cannot_loosen_the_bounds(published, query, message):
    with pytest.raises(sa.exc.DBAPIError, match=message):
        engine(published / WAREHOUSE, query).connect()


# ------------------------------------------------------------------ statements

SIDE_EFFECTS = [
    "SELECT * FROM enable_logging(storage = 'file', storage_path = '{outside}')",
    "SELECT * FROM disable_logging()", "SELECT * FROM truncate_duckdb_logs()",
    "SELECT * FROM enable_profiling()", "SELECT * FROM disable_profiling()",
    "SELECT * FROM checkpoint()", "SELECT * FROM force_checkpoint()", "FROM main.\"CHECKPOINT\" ()",
    "SELECT * FROM query('SELECT * FROM checkpoint()')",
]


@pytest.mark.parametrize("statement", SIDE_EFFECTS)
def test_side_effect_functions_are_refused_by_name(cli, published, tmp_path, statement):
    status, out, err = cli("sql", "--out", published, statement.format(outside=tmp_path / "log"))
    assert status == 2 and out == "" and err.count("\n") == 1 and "() is refused" in err, err
    assert list(tmp_path.iterdir()) == []
    with engine(published / WAREHOUSE).connect() as connection, pytest.raises(sa.exc.DBAPIError, match="refused"):
        connection.exec_driver_sql(statement.format(outside=tmp_path / "log"))


ANSWERED = ["PIVOT bet_performance ON bet USING sum(hits)", "/* comment */ EXPLAIN SELECT 1",
            "-- comment\nSELECT 1 AS one", "PRAGMA show_tables", "PRAGMA database_list",
            "PRAGMA storage_info('bet_performance')", "SHOW TABLES", "DESCRIBE rounds", "FROM shoes LIMIT 1"]


@pytest.mark.parametrize("statement", ANSWERED)
def test_what_analysts_write_is_answered(cli, published, statement):
    status, out, err = cli("sql", "--out", published, statement)
    assert status == 0 and err == "" and out, err
    with engine(published / WAREHOUSE).connect() as connection:
        assert connection.exec_driver_sql(statement).fetchall()


def test_a_lone_comment_or_unknown_option_is_one_line(published, baccarat_here):
    done = baccarat_here("sql", "--out", published, "--nope")
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "no statement" in done.stderr


CHECK_ON_THIS_DUCKDB = """
import json, sys
from pipeline.marts.statements import refuse_all_but_queries
from pipeline.marts.warehouse import open_warehouse
con = open_warehouse(sys.argv[1])
answers = {}
for statement in json.loads(sys.argv[2]):
    try:
        refuse_all_but_queries(con, statement)
        result = con.sql(statement)
        answers[statement] = "answered" if result is None or isinstance(result.fetchall(), list) else "?"
    except Exception as error:
        answers[statement] = "refused" if "refused" in str(error) else str(error)
print(json.dumps(answers))
"""


@pytest.fixture
def duckdb_1_5_6() -> Iterator[Path]:
    """A venv holding DuckDB 1.5.6, kept between runs (tests/functional/venv_cache.py; a name of its own, so
    that it and the oldest DuckDB's venv of tests/functional/test_superset.py do not replace each other)."""
    with cached_venv("serving-duckdb", ["duckdb==1.5.6"], None, os.environ | {"PIP_COMPILE": "false"}) as venv:
        yield venv


def test_duckdb_1_5_6_refuses_and_answers_the_same(published, tmp_path, duckdb_1_5_6):
    """The version Superset's [duckdb] extra installs: side effects refused (1.5.6 aborts the process on
    enable_logging to a file), queries answered, PRAGMAs alike, as on the DuckDB of this suite."""
    venv = duckdb_1_5_6
    statements = [s.format(outside=tmp_path / "log") for s in SIDE_EFFECTS] + ANSWERED + ["PRAGMA enable_profiling"]
    answers = [json_run(python, published, statements) for python in (venv / "bin" / "python", sys.executable)]
    assert answers[0] == answers[1]
    assert [answers[0][s] for s in statements] == ["refused"] * len(SIDE_EFFECTS) + ["answered"] * len(ANSWERED) + [
        "refused"]
    assert not (tmp_path / "log").exists()


def json_run(python, published, statements) -> dict:
    done = subprocess.run([python, "-c", CHECK_ON_THIS_DUCKDB, str(published / WAREHOUSE), json.dumps(statements)],
                          capture_output=True, text=True, timeout=120, env=os.environ | {"PYTHONPATH": str(REPOSITORY)})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


# ------------------------------------------------------------------ a data folder that moves

def test_a_copied_data_folder_reads_its_own_files(published, tmp_path, baccarat_here):
    copy = tmp_path / "copy"
    shutil.copytree(published, copy, symlinks=True)
    moved = tmp_path / "original-moved"
    count = "SELECT (SELECT count(*) FROM rounds) AS rounds, (SELECT count(*) FROM shoe_summary) AS shoes"
    expected = baccarat_here("sql", "--out", published, count).stdout
    published.rename(moved)  # the original goes away: the copy still reads, from its own files
    try:
        done = baccarat_here("sql", "--out", copy, count)
        assert done.returncode == 0 and done.stdout == expected, done.stderr
        moved_again = baccarat_here("sql", "--out", moved, count)
        assert moved_again.returncode == 0 and moved_again.stdout == expected, moved_again.stderr
    finally:
        moved.rename(published)


@pytest.mark.parametrize("table", ["rounds", "marts/shoe_summary"])
def test_a_view_whose_files_are_gone_names_the_run_the_file_and_the_repair(data, baccarat_here, table):
    gone = next((data / table).rglob("part-*.parquet"))
    gone.unlink()
    done = baccarat_here("sql", "--out", data, "SELECT count(*) FROM bet_performance")
    assert done.returncode == 1 and done.stdout == "" and done.stderr.count("\n") == 1, done.stderr
    assert "run 'serving'" in done.stderr and str(gone) in done.stderr and f"baccarat marts --out {data} --warehouse" in done.stderr
    assert f"`baccarat verify --out {data}` names the repair" in done.stderr


# ------------------------------------------------------------------ publishing fails in one line

def marts_snapshot(out: Path) -> dict:
    return {p: p.read_bytes() for p in sorted((out / "marts").rglob("*")) if p.is_file()}


@pytest.mark.parametrize(("warehouse", "message"), [
    ("/", "is a folder"), ("{data}", "is a folder"), ("/sys/warehouse.duckdb", "cannot write the warehouse"),
])
def test_a_warehouse_that_cannot_be_written_is_refused_before_anything_is_committed(cli, data, warehouse, message):
    before = marts_snapshot(data)
    status, out, err = cli("marts", "--out", data, "--warehouse", warehouse.format(data=data))
    assert status == 2 and out == "" and err.count("\n") == 1 and message in err, err
    assert marts_snapshot(data) == before


def test_a_full_disk_while_publishing_is_one_line_and_leaves_nothing_behind(data):
    """The warehouse file grows past what the disk takes (a file size limit, as a full disk answers a write):
    one line, the last publish still answers, and no temporary file or journal stays."""
    published = (data / WAREHOUSE).resolve()
    limit = 100_000  # bytes: above any mart's file of this run, below the warehouse and its journal
    done = on_a_full_disk(["baccarat", "marts", "--out", str(data)], limit, timeout=300)
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr  # the world's failure, not bad input
    assert "cannot write the warehouse" in done.stderr
    assert (data / WAREHOUSE).resolve() == published
    sealed = published.with_name(published.name + ".sha256")
    assert sorted((data / (WAREHOUSE + PUBLISHES)).rglob("*")) == [published.parent, published, sealed]
    assert "true" in baccarat("sql", "--out", data, TRUE_EV).stdout


# ------------------------------------------------------------------ Ctrl-C

def test_ctrl_c_during_a_one_shot_query_is_one_line_and_exit_130(published):
    query = subprocess.Popen(["baccarat", "sql", "--out", str(published), ENDLESS], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    while threads(query.pid) < 10 and query.poll() is None:  # DuckDB's threads: the imports are over
        time.sleep(0.2)
    time.sleep(1)
    query.send_signal(signal.SIGINT)
    out, err = query.communicate(timeout=60)
    assert query.returncode == 130 and out == "" and err == "error: interrupted\n"


def threads(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("Threads:")))
