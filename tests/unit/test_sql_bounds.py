"""`baccarat sql --threads 100000 'SELECT 1'` ran for many minutes before its query (DuckDB starts the
threads with the connection, about 5 ms each here): a bound that is itself unbounded. Threads above
MAX_THREADS are refused in one line, from the command line and from the environment."""

import pytest

from pipeline.errors import BaccaratError
from pipeline.marts.bounds import ENVIRONMENT, MAX_THREADS, MAX_TIMEOUT, Bounds


def test_sql_threads_100000_ran_for_minutes_before_its_query(cli, tmp_path):
    status, out, err = cli("sql", "--warehouse", tmp_path / "warehouse.duckdb", "--threads", "100000", "SELECT 1")
    assert (status, out) == (2, "")
    assert err == f"error: threads (--threads or {ENVIRONMENT['threads']}) must be at most 256, not 100,000\n"


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
    assert f"the timeout in seconds (--timeout or {ENVIRONMENT['timeout']}) must be at most 1,000,000, not " in err


def test_a_timeout_up_to_the_bound_is_taken():
    assert Bounds.given(timeout=MAX_TIMEOUT).timeout == MAX_TIMEOUT


@pytest.mark.parametrize(("option", "value", "named"), [
    ("--timeout", "0", "the timeout in seconds (--timeout or BACCARAT_SQL_TIMEOUT) must be a positive number"),
    ("--memory-limit", "lots", "memory_limit (--memory-limit or BACCARAT_SQL_MEMORY_LIMIT) must be a size"),
    ("--max-temp-directory-size", "-1", "max_temp_directory_size (--max-temp-directory-size or "
                                        "BACCARAT_SQL_MAX_TEMP_DIRECTORY_SIZE) must be a size")])
def test_a_bad_bound_given_as_an_option_named_only_the_environment_variable(cli, tmp_path, option, value, named):
    """`baccarat sql --timeout 0` said 'the timeout in seconds (BACCARAT_SQL_TIMEOUT) must be ...': the user
    had set no variable. The line names the option too, as the timeout's own stop does."""
    status, out, err = cli("sql", "--warehouse", tmp_path / "warehouse.duckdb", option, value, "SELECT 1")
    assert (status, out) == (2, "") and err.count("\n") == 1 and named in err
