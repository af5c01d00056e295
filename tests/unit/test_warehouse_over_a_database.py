"""`baccarat marts --warehouse ~/analytics.duckdb` replaced the user's own DuckDB database, its tables
lost, with a link to a new warehouse: a publish may replace any DuckDB file. A database that holds tables
or views but no mart is another file a user named: it is refused, untouched. An empty database, one that
cannot be opened (damaged) and a warehouse of the layout before publishes (a plain file holding the marts)
are still replaced. No JVM."""

import duckdb
import pytest

from pipeline.errors import BaccaratError
from pipeline.marts.publish import check_warehouse_target


def database(path, *statements):
    con = duckdb.connect(str(path))
    for statement in statements:
        con.execute(statement)
    con.close()
    return path


@pytest.mark.parametrize("statement", ["CREATE TABLE customers AS SELECT 42 AS id",
                                       "CREATE VIEW answers AS SELECT 42 AS answer"])
def test_a_duckdb_database_of_the_users_own_is_refused_and_left_as_it_is(tmp_path, statement):
    own = database(tmp_path / "analytics.duckdb", statement)
    before = own.read_bytes()
    with pytest.raises(BaccaratError, match="is a DuckDB database that is not a warehouse .*: it is left as it is"):
        check_warehouse_target(own)
    assert own.read_bytes() == before and not own.is_symlink()


def test_an_empty_database_and_a_warehouse_of_the_old_layout_are_still_replaced(tmp_path):
    empty = database(tmp_path / "empty.duckdb")
    old = database(tmp_path / "warehouse.duckdb", "CREATE TABLE outcome_summary AS SELECT 'punto_banco' AS rules")
    for path in (empty, old):
        assert check_warehouse_target(path) == path
