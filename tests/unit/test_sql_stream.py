"""A query of `baccarat sql` stopped after its first rows were written (`> file`, `| less`): the timeout
or a Ctrl-C reached Python through Arrow's stream as a bare OSError, and the command ended in a traceback
with status 1. It ends as a query stopped before its first row does: one line, or the interrupt."""

import os
import resource
import signal
import threading

import duckdb
import pytest
from cli_process import with_the_reader_gone

from pipeline.errors import BaccaratError
from pipeline.marts import shell
from pipeline.marts.bounds import Bounds

ENDLESS_ROWS = "SELECT a.range AS a, b.range AS b FROM range(1000000) a, range(1000000) b"


def test_a_query_stopped_by_its_timeout_while_its_rows_stream_was_a_traceback(capsys):
    con = duckdb.connect()
    with pytest.raises(BaccaratError, match=r"stopped after 2 s, its statement timeout \(the default\); "):
        shell.run_one(con, Bounds(timeout=2), ENDLESS_ROWS)
    assert capsys.readouterr().out.startswith("a\tb\n0\t0\n")  # rows had been written
    assert con.sql("SELECT 6 * 7").fetchall() == [(42,)]  # the connection stays usable


def test_sql_over_its_timeout_into_a_file_did_not_say_the_file_is_incomplete(cli, tmp_path, capsys):
    """`baccarat sql --timeout 2 'SELECT * FROM rounds' > file` left part of the rows in the file and said
    only 'the query was stopped after 2 s, the statement timeout (--timeout or BACCARAT_SQL_TIMEOUT)'. The
    line says how many rows were written, that they are only part of the result, and how to allow more."""
    path = tmp_path / "warehouse.duckdb"
    duckdb.connect(str(path)).close()
    status, out, err = cli("sql", "--warehouse", path, "--timeout", "2", ENDLESS_ROWS)
    rows = out.count("\n") - 1
    assert status == 2 and out.startswith("a\tb\n0\t0\n") and rows > 0
    assert err == (f"error: the query was stopped after 2 s, its statement timeout (--timeout); the {rows:,} rows "
                   "written before it are only part of the result; give it more time with --timeout SECONDS\n")


def test_a_timeout_from_the_environment_says_so_and_where_the_report_takes_a_longer_one(monkeypatch):
    """The report and the BI dialect have no --timeout: their line names the variable."""
    monkeypatch.setenv("BACCARAT_SQL_TIMEOUT", "1")
    bounds = Bounds.given()
    with pytest.raises(BaccaratError) as stopped, bounds.timed(con := duckdb.connect()):
        con.sql("SELECT count(*) FROM range(10000000000000)").fetchall()
    assert str(stopped.value) == ("the query was stopped after 1 s, its statement timeout (BACCARAT_SQL_TIMEOUT); "
                                  "give it more time with BACCARAT_SQL_TIMEOUT=SECONDS")



def test_a_timeout_a_bi_connection_tightened_says_to_loosen_it_there():
    """It said to set BACCARAT_SQL_TIMEOUT, while the bound that stopped the query was the URI's timeout=
    (a new user's trial)."""
    bounds = Bounds.given().tightened({"timeout": "1"})
    with pytest.raises(BaccaratError) as stopped, bounds.timed(con := duckdb.connect()):
        con.sql("SELECT count(*) FROM range(10000000000000)").fetchall()
    assert str(stopped.value) == ("the query was stopped after 1 s, its statement timeout (timeout= in the connection "
                                  "URI); give it more time with a larger timeout= in the connection URI (at most "
                                  "BACCARAT_SQL_TIMEOUT)")

def test_a_query_interrupted_while_its_rows_stream_was_a_traceback(capsys):
    con = duckdb.connect()
    threading.Timer(2, os.kill, (os.getpid(), signal.SIGINT)).start()
    with pytest.raises(KeyboardInterrupt):
        shell.run_one(con, Bounds(timeout=60), ENDLESS_ROWS)
    assert capsys.readouterr().out.startswith("a\tb\n")


def test_a_query_that_fails_while_its_rows_stream_is_one_line(capsys):
    failing = "SELECT range, CASE WHEN range < 50000 THEN range ELSE error('bad row') END AS v FROM range(100000)"
    with pytest.raises(BaccaratError, match="bad row"):
        shell.run_one(duckdb.connect(), Bounds(timeout=60), failing)


def test_several_statements_in_the_argument_showed_the_last_ones_rows_alone(cli, tmp_path):
    """`baccarat sql 'SELECT 1; SELECT 2'` printed '2' and exit 0: the first query's rows were lost."""
    path = tmp_path / "warehouse.duckdb"
    duckdb.connect(str(path)).close()
    status, out, err = cli("sql", "--warehouse", path, "SELECT 1 AS first; SELECT 2 AS second")
    assert (status, out) == (2, "") and err.count("\n") == 1 and "2 statements given" in err
    assert cli("sql", "--warehouse", path, "SELECT 1 AS first; -- a comment after the one query")[:2] == (0, "first\n1\n")


def test_a_reader_that_left_let_the_query_run_into_its_timeout(tmp_path):
    """`baccarat sql 'SELECT * FROM rounds' | head -1`: the rows went on into os.devnull until the query's
    end, a minute on 1.8M rounds, or until its timeout, which said 'error: the query was stopped' with status
    2. The query stops once the reader has gone: status 141, as for any command, and nothing on stderr."""
    path = tmp_path / "warehouse.duckdb"
    duckdb.connect(str(path)).close()
    assert with_the_reader_gone(["sql", "--warehouse", str(path), "--timeout", "3", ENDLESS_ROWS], tmp_path) == (141, b"")


def test_the_memory_cap_holds_only_within_and_never_loosens_a_lower_limit():
    """shell.memory_capped: the process's data may grow by the memory limit and the headroom; after the
    block the limit is the one before, and a limit already tighter than the cap is left as it is."""
    before = resource.getrlimit(resource.RLIMIT_DATA)
    with shell.memory_capped(Bounds(memory_limit=10**9)):
        soft, _ = resource.getrlimit(resource.RLIMIT_DATA)
        assert soft != resource.RLIM_INFINITY and soft - shell._data_bytes() <= 10**9 + shell.HEADROOM_BYTES
    assert resource.getrlimit(resource.RLIMIT_DATA) == before
    lower = (shell._data_bytes() + 8 * 10**9, before[1])
    resource.setrlimit(resource.RLIMIT_DATA, lower)
    try:
        with shell.memory_capped(Bounds(memory_limit=10**10)):
            assert resource.getrlimit(resource.RLIMIT_DATA) == lower
    finally:
        resource.setrlimit(resource.RLIMIT_DATA, before)


def test_a_query_stopped_after_its_one_row_said_the_1_rows_written_before_it_are(capsys, monkeypatch):
    """'the 1 rows written before it are only part of the result': the count and its noun agree."""
    def one_row_then_stopped(reader):
        yield next(reader)
        raise duckdb.InterruptException("INTERRUPT Error: Interrupted!")

    monkeypatch.setattr(shell, "_batches", one_row_then_stopped)
    with pytest.raises(BaccaratError, match="; the 1 row written before it is only part of the result"):
        shell.run_one(duckdb.connect(), Bounds(timeout=60), "SELECT 1 AS x")
    assert capsys.readouterr().out == "x\n1\n"



class DeafConnection:
    """A DuckDB connection whose query no interrupt reaches, as one DuckDB is folding constants for."""

    def __init__(self, con: duckdb.DuckDBPyConnection):
        self._con = con

    def interrupt(self) -> None:
        pass

    def cursor(self) -> "DeafConnection":
        return DeafConnection(self._con.cursor())

    def __getattr__(self, name: str):
        return getattr(self._con, name)


def test_a_whole_result_written_after_the_timeout_said_the_query_was_stopped(capsys):
    """A result that came after the timeout (`sql --timeout 1e-9 'SELECT 1'`): the command wrote it whole,
    then said only 'the query was stopped'. The line now says the result came late and that what was
    written is all of it; the status is still the timeout's."""
    con = DeafConnection(duckdb.connect())
    with pytest.raises(BaccaratError) as late:
        shell.run_one(con, Bounds(timeout=0.001), "SELECT count(*) AS n FROM range(400000000)")
    assert capsys.readouterr().out == "n\n400000000\n"
    assert str(late.value) == ("the query's result came after 0.001 s, its statement timeout (the default); the 1 "
                               "row written is the whole result; give it more time with BACCARAT_SQL_TIMEOUT=SECONDS")
