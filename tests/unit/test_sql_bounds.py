"""`baccarat sql --threads 100000 'SELECT 1'` ran for many minutes before its query (DuckDB starts the
threads with the connection, about 5 ms each here): a bound that is itself unbounded. Threads above
MAX_THREADS are refused in one line, from the command line and from the environment."""

import pytest

from pipeline.errors import BaccaratError
from pipeline.marts.bounds import ENVIRONMENT, MAX_THREADS, Bounds


def test_sql_threads_100000_ran_for_minutes_before_its_query(cli, tmp_path):
    status, out, err = cli("sql", "--warehouse", tmp_path / "warehouse.duckdb", "--threads", "100000", "SELECT 1")
    assert (status, out) == (2, "")
    assert err == f"error: threads ({ENVIRONMENT['threads']}) must be at most 256, not 100,000\n"


def test_threads_from_the_environment_have_the_same_bound(monkeypatch):
    monkeypatch.setenv(ENVIRONMENT["threads"], str(MAX_THREADS + 1))
    with pytest.raises(BaccaratError, match="at most 256"):
        Bounds.given()


def test_threads_up_to_the_bound_are_taken():
    assert Bounds.given(threads=MAX_THREADS).threads == MAX_THREADS
