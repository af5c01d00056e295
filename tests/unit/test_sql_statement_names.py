"""The SQL guard's one-line refusal named DuckDB's statement type, not the statement the user wrote
(INSTALL as LOAD, CHECKPOINT as CALL, USE and RESET as SET, ANALYZE as VACUUM), and a statement whose
type DuckDB's Python enum does not know (UPDATE EXTENSIONS) ended `baccarat sql` in a traceback."""

import duckdb
import pytest

from pipeline.marts.statements import refuse_all_but_queries


@pytest.mark.parametrize(("statement", "named"), [
    ("INSTALL httpfs", "INSTALL"),
    ("force install httpfs", "FORCE INSTALL"),
    ("CHECKPOINT", "CHECKPOINT"),
    ("FORCE CHECKPOINT", "FORCE CHECKPOINT"),
    ("USE memory", "USE"),
    ("RESET threads", "RESET"),
    ("ANALYZE", "ANALYZE"),
    ("BEGIN", "BEGIN"),
    ("TRUNCATE t", "TRUNCATE"),
    ("UPDATE EXTENSIONS", "UPDATE"),
    ("SELECT 1; /* a note */ install json", "INSTALL"),
    ("LOAD json", "LOAD"),
    ("COPY t FROM 'x.csv'", "COPY"),
    ("WITH a AS (SELECT 1) INSERT INTO t SELECT * FROM a", "INSERT"),  # its first word is no statement's
])
def test_a_refused_statement_is_named_as_it_was_written(statement, named):
    with pytest.raises(duckdb.PermissionException) as refused:
        refuse_all_but_queries(duckdb.connect(), statement)
    assert str(refused.value).startswith(f"{named} statements are refused: the warehouse is read-only")


@pytest.mark.parametrize("query", ["SELECT 1", "FROM range(3)", "SUMMARIZE SELECT 1 AS x", "PRAGMA version"])
def test_queries_still_pass(query):
    refuse_all_but_queries(duckdb.connect(), query)
