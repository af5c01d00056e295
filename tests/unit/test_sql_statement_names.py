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


@pytest.mark.parametrize("query", ["SHOW TABLES", "DESCRIBE SELECT 1 AS x", "SUMMARIZE SELECT 1 AS x",
                                   "PIVOT (SELECT 'B' AS o) ON o USING count(*)", "EXPLAIN SELECT 1",
                                   "PRAGMA database_list"])
def test_the_refusal_names_every_form_of_query_that_runs(query):
    """The refusal said queries could only be "SELECT, or EXPLAIN of a SELECT", while SHOW, DESCRIBE,
    SUMMARIZE, PIVOT and the PRAGMAs that read run too (README, docs/serving.md): a user told INSTALL was
    refused read that PRAGMA database_list would be."""
    refuse_all_but_queries(duckdb.connect(), query)
    with pytest.raises(duckdb.PermissionException) as refused:
        refuse_all_but_queries(duckdb.connect(), "INSTALL httpfs")
    assert query.split()[0] in str(refused.value)
