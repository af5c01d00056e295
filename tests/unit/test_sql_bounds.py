"""`baccarat sql --threads 100000 'SELECT 1'` ran for many minutes before its query (DuckDB starts the
threads with the connection, about 5 ms each here): a bound that is itself unbounded. Threads above
MAX_THREADS are refused in one line, from the command line and from the environment."""

import time

import duckdb
import pytest
import sqlalchemy as sa

from pipeline.errors import BaccaratError
from pipeline.marts.bounds import ENVIRONMENT, MAX_THREADS, MAX_TIMEOUT, Bounds


def test_sql_threads_100000_ran_for_minutes_before_its_query(cli, tmp_path):
    status, out, err = cli("sql", "--warehouse", tmp_path / "warehouse.duckdb", "--threads", "100000", "SELECT 1")
    assert (status, out) == (2, "")
    assert err == "error: --threads must be at most 256, not 100,000\n"


def test_threads_from_the_environment_have_the_same_bound(monkeypatch):
    monkeypatch.setenv(ENVIRONMENT["threads"], str(MAX_THREADS + 1))
    with pytest.raises(BaccaratError, match="at most 256"):
        Bounds.given()


def test_threads_up_to_the_bound_are_taken():
    assert Bounds.given(threads=MAX_THREADS).threads == MAX_THREADS


@pytest.mark.parametrize("seconds", ["1e308", "1e10", "1000001"])
def test_sql_timeout_1e308_printed_a_thread_s_traceback(cli, tmp_path, seconds):
    """The query ran, and the timer thread's OverflowError ("timestamp out of range") came out as a
    traceback on stderr with exit 0."""
    status, out, err = cli("sql", "--warehouse", tmp_path / "warehouse.duckdb", "--timeout", seconds, "SELECT 1")
    assert (status, out) == (2, "") and err.count("\n") == 1
    assert "error: --timeout (seconds) must be at most 1,000,000, not " in err


def test_a_timeout_just_past_the_bound_was_said_to_be_the_bound():
    """`--timeout 1000001` said "must be at most 1,000,000, not 1e+06": the refused value read as the bound."""
    with pytest.raises(BaccaratError) as refused:
        Bounds.given(timeout=1_000_001.0)
    assert str(refused.value) == "--timeout (seconds) must be at most 1,000,000, not 1,000,001.0"


def test_a_timeout_up_to_the_bound_is_taken():
    assert Bounds.given(timeout=MAX_TIMEOUT).timeout == MAX_TIMEOUT


@pytest.mark.parametrize(("option", "value", "said"), [
    ("--timeout", "0", "error: --timeout (seconds) must be a positive number, not 0.0\n"),
    ("--memory-limit", "lots", "error: --memory-limit must be a size such as 2GB or 512MiB, not 'lots'\n"),
    ("--max-temp-directory-size", "-1", "error: --max-temp-directory-size must be a size such as 2GB or 512MiB, "
                                        "not '-1'\n")])
def test_a_bad_bound_given_as_an_option_named_the_setting_and_a_variable_the_user_had_not_set(cli, tmp_path, option,
                                                                                           value, said):
    """`baccarat sql --memory-limit lots` said 'memory_limit (--memory-limit or BACCARAT_SQL_MEMORY_LIMIT) must
    be ...': DuckDB's setting and a variable the user had not set. The line names what the user gave."""
    status, out, err = cli("sql", "--warehouse", tmp_path / "warehouse.duckdb", option, value, "SELECT 1")
    assert (status, out, err) == (2, "", said)


@pytest.mark.parametrize(("name", "value", "said"), [
    ("timeout", "-1", "BACCARAT_SQL_TIMEOUT (seconds) must be a positive number, not '-1'"),
    ("memory_limit", "lots", "BACCARAT_SQL_MEMORY_LIMIT must be a size such as 2GB or 512MiB, not 'lots'"),
    ("threads", "0", "BACCARAT_SQL_THREADS must be a positive whole number, not '0'")])
def test_a_bad_bound_from_the_environment_names_the_variable(monkeypatch, name, value, said):
    monkeypatch.setenv(ENVIRONMENT[name], value)
    with pytest.raises(BaccaratError) as refused:
        Bounds.given(timeout=None, memory_limit=None, threads=None)
    assert str(refused.value) == said


def test_a_bad_bound_in_a_bi_uri_names_the_uri_s_key():
    with pytest.raises(BaccaratError) as refused:
        Bounds.given().tightened({"threads": "0"})
    assert str(refused.value) == "threads= in the connection URI must be a positive whole number, not '0'"


@pytest.mark.parametrize("query", ["timeout=1&timeout=2", "threads=1&threads=1", "custom_user_agent=a&custom_user_agent=b"])
def test_a_key_repeated_in_a_bi_uri_was_reported_as_a_python_tuple(tmp_path, query):
    """`?timeout=1&timeout=2` said "timeout= ... must be a positive number, not ('1', '2')", and a repeated
    harmless key was taken as it came. The key is named, before any warehouse is opened."""
    key = query.split("=")[0]
    engine = sa.create_engine(f"duckdb+baccarat:///{tmp_path / 'warehouse.duckdb'}?{query}")
    with pytest.raises(sa.exc.DBAPIError) as refused:
        engine.connect()
    message = str(refused.value.orig)
    assert message == f"{key}= is given 2 times in the connection URI: give it once" and "(" not in message


def test_an_empty_key_in_a_bi_uri_never_reaches_the_dialect_as_the_docs_say():
    """`?timeout=` keeps the bound as it was, without an error: SQLAlchemy's URI parser drops a key without a
    value before any dialect sees the URI (docs/serving.md says so); one that reached it would be refused."""
    assert dict(sa.engine.make_url("duckdb+baccarat:////w.duckdb?timeout=&threads=1").query) == {"threads": "1"}
    with pytest.raises(BaccaratError) as refused:
        Bounds.given().tightened({"timeout": ""})
    assert str(refused.value) == "timeout= in the connection URI (seconds) must be a positive number, not ''"


def test_a_temp_folder_inside_the_data_named_a_variable_the_user_had_not_set(cli, tmp_path):
    """`baccarat sql --temp-directory DATA/spill` said 'give one outside it (BACCARAT_SQL_TEMP_DIRECTORY)'."""
    (tmp_path / "warehouse.duckdb").touch()
    status, out, err = cli("sql", "--warehouse", tmp_path / "warehouse.duckdb", "--temp-directory", tmp_path / "spill",
                           "SELECT 1")
    assert (status, out) == (2, "")
    assert err == f"error: the temp folder {tmp_path / 'spill'} (--temp-directory) is inside the data {tmp_path}: " \
                  "give one outside it\n"


@pytest.mark.parametrize("option", ["--memory-limit", "--max-temp-directory-size"])
def test_a_size_past_what_duckdb_takes_said_the_warehouse_was_damaged(cli, tmp_path, option):
    """`baccarat sql --memory-limit 99999999999TB` exited 1 with 'cannot be opened (Parser Error: Memory value
    out of range ...): it is damaged or not a warehouse: publish it again': bad input read as damaged data."""
    duckdb.connect(str(tmp_path / "warehouse.duckdb")).close()
    status, out, err = cli("sql", "--warehouse", tmp_path / "warehouse.duckdb", option, "99999999999TB", "SELECT 1")
    assert (status, out, err) == (2, "", f"error: {option} must be at most 1024TiB, not '99999999999TB'\n")
    assert Bounds.given(memory_limit="1024TiB").memory_limit == 2**50


@pytest.mark.parametrize("fetch", ["iterate", "fetchall", "fetchmany"])
def test_a_bi_query_whose_rows_are_computed_as_they_are_fetched_ran_past_its_timeout(tmp_path, fetch):
    """DuckDB streams a result: execute returned at once, and fetching the rows of
    `SELECT md5(...) FROM range(...)` ran for minutes past `?timeout=1`, outside the timeout's timer."""
    warehouse = tmp_path / "warehouse.duckdb"
    duckdb.connect(str(warehouse)).close()
    engine = sa.create_engine(f"duckdb+baccarat:///{warehouse}?timeout=1&threads=1")
    fetches = {"iterate": lambda result: list(result), "fetchall": lambda result: result.fetchall(),
               "fetchmany": lambda result: result.fetchmany(10**6)}
    with engine.connect() as con:
        result = con.exec_driver_sql("SELECT md5(repeat(range::VARCHAR, 2000)) FROM range(400000)")
        started = time.monotonic()
        with pytest.raises(sa.exc.DBAPIError) as stopped:
            fetches[fetch](result)
        assert time.monotonic() - started < 5
        assert str(stopped.value.orig).startswith("the query was stopped after 1 s, its statement timeout")
        con.rollback()
        assert con.exec_driver_sql("SELECT 42").fetchall() == [(42,)]
        assert [row for row in con.exec_driver_sql("SELECT * FROM range(3)")] == [(0,), (1,), (2,)]
    engine.dispose()
