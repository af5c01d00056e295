"""BI tools (Apache Superset, Metabase's DuckDB driver aside) reach the warehouse through
SQLAlchemy and the package's duckdb+baccarat dialect (duckdb-engine's, opening the warehouse as
`baccarat sql` does): open it as they would, list and query every table, and find it confined."""

import os
import shutil
import subprocess
import sys
import threading

import pytest
import sqlalchemy as sa
from spark_jobs import simulate_with_marts

from pipeline.bets import BET_KINDS
from pipeline.marts.inputs import MARTS
from pipeline.marts.publish import PER_SHOE_MARTS
from pipeline.rule_sets import load_rule_set
from pipeline.schemas import contract
from pipeline.storage import WAREHOUSE
from test_sql import HOSTILE, snapshot

RULES = "ez_baccarat"  # offers a subset of the bet kinds: the marts still carry them all
VIEWS = ("rounds", "shoes")


@pytest.fixture(scope="module")
def warehouse(spark, tmp_path_factory):
    out = tmp_path_factory.mktemp("bi")
    return simulate_with_marts(spark, out, rules=RULES, seed=5, shoes=40, run_id="bi") / WAREHOUSE


def uri(path) -> str:
    """The SQLAlchemy URI a BI tool is given: duckdb+baccarat:/// then the file's path (absolute: four
    slashes)."""
    return f"duckdb+baccarat:///{path}"


def read_only_engine(path) -> sa.Engine:
    """As Superset opens it with the README's extra: the URI, and {"connect_args": {"read_only": true}}
    (Superset adds a user agent to DuckDB's config)."""
    return sa.create_engine(uri(path), connect_args={"read_only": True, "config": {"custom_user_agent": "superset"}})


@pytest.fixture(scope="module")
def engine(warehouse):
    engine = read_only_engine(warehouse)
    yield engine
    engine.dispose()


def expected_columns(table: str) -> list[str]:
    """The columns a table has in the warehouse: marts carry every bet kind, the views the run's
    bets and the run_id taken from the folder name."""
    if table in VIEWS:
        return [c.name for c in contract(table).resolved(tuple(load_rule_set(RULES).bets))] + ["run_id"]
    return [c.name for c in contract(table).resolved(tuple(BET_KINDS))]


def test_the_uri_is_absolute(warehouse):
    assert warehouse.is_absolute() and uri(warehouse).startswith("duckdb+baccarat:////")


def test_the_inspector_lists_every_mart_and_the_views(engine):
    """On a local OUT the rounds, the shoes and the marts of one row per shoe are views over their files."""
    inspector = sa.inspect(engine)
    viewed = {*VIEWS, *PER_SHOE_MARTS}
    assert set(MARTS) - viewed <= set(inspector.get_table_names())
    assert viewed <= set(inspector.get_view_names())
    assert not viewed & set(inspector.get_table_names())


@pytest.mark.parametrize("table", [*MARTS, *VIEWS])
def test_every_table_answers_queries(engine, table):
    columns = expected_columns(table)
    with engine.connect() as connection:
        assert connection.execute(sa.text(f"SELECT count(*) FROM {table}")).scalar() > 0
        # the columns of its contract, by name, through SQLAlchemy's own quoting (round, rows, ...)
        query = sa.select(*(sa.column(name) for name in columns)).select_from(sa.table(table)).limit(5)
        result = connection.execute(query)
        assert list(result.keys()) == columns
        assert len(result.fetchall()) > 0
        described = connection.execute(
            sa.text("SELECT column_name FROM information_schema.columns WHERE table_name = :t ORDER BY ordinal_position"),
            {"t": table},
        ).scalars().all()
    assert described == columns


# Needs SQLAlchemy 2.0 with DuckDB 2.0.1 (pinned in the test extra): 2.0.45 to 2.0.58 reflect columns
# since DuckDB fixed duckdb/duckdb#22069; 2.1 queries pg_catalog.pg_collation, which DuckDB lacks.
def test_column_reflection_as_a_bi_tool_does_when_adding_a_dataset(engine):
    inspector = sa.inspect(engine)
    for table in (*MARTS, *VIEWS):
        assert [c["name"] for c in inspector.get_columns(table)] == expected_columns(table)


def test_a_read_only_connection_refuses_writes(engine):
    for statement in ("CREATE TABLE x AS SELECT 1", "DELETE FROM outcome_summary"):
        with engine.connect() as connection, pytest.raises(sa.exc.DBAPIError, match="read-only"):
            connection.execute(sa.text(statement))
    assert "x" not in sa.inspect(engine).get_table_names()


@pytest.mark.parametrize(("statement", "message"), HOSTILE)
def test_a_bi_connection_writes_nothing_and_reads_nothing_outside_the_data(engine, warehouse, tmp_path, statement,
                                                                         message):
    """What SQL Lab sends goes to the cursor as it is: the same statements as `baccarat sql` refuses."""
    data = warehouse.parent
    committed = next((data / "rounds").rglob("part-*.parquet"))
    before = snapshot(data)
    with engine.connect() as connection, pytest.raises(sa.exc.DBAPIError, match=message):
        connection.exec_driver_sql(statement.format(outside=tmp_path, data=data, committed=committed))
    assert snapshot(data) == before and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("connect_args", [
    {"config": {"enable_external_access": True}},
    {"config": {"allowed_directories": ["/"]}},
    {"read_only": False},
    {"preload_extensions": ["json"]},
])
def test_connection_settings_cannot_loosen_it(warehouse, connect_args):
    engine = sa.create_engine(uri(warehouse), connect_args=connect_args)
    with pytest.raises(sa.exc.DBAPIError, match="opened read-only with settings of its own"):
        engine.connect()


def test_a_missing_warehouse_is_one_line(tmp_path):
    engine = sa.create_engine(uri(tmp_path / WAREHOUSE))
    with pytest.raises(sa.exc.DBAPIError, match=f"no warehouse at {tmp_path / WAREHOUSE}"):
        engine.connect()


def test_the_warehouse_is_in_a_storage_version_duckdb_1_reads(engine):
    with engine.connect() as connection:
        tags = connection.exec_driver_sql("SELECT tags FROM duckdb_databases() WHERE database_name = 'warehouse'")
        assert tags.scalar() == {"storage_version": "v1.0.0+"}


def test_publishing_while_a_bi_tool_holds_the_warehouse_open(warehouse, tmp_path):
    """`baccarat marts` in another process renames a new file over the one a reader has open:
    the publish succeeds, the open connection keeps reading the old file, a new one the new file."""
    out = tmp_path / "data"
    shutil.copytree(warehouse.parent, out)
    path = out / WAREHOUSE
    shoes_drawn = "SELECT count(DISTINCT shoe_id) FROM road_cells"
    held = read_only_engine(path)
    try:
        with held.connect() as connection:
            assert connection.execute(sa.text(shoes_drawn)).scalar() == 40
            inode = os.stat(path).st_ino
            publish = subprocess.run(
                [sys.executable, "-c", "import sys; from pipeline.cli import main; sys.exit(main(sys.argv[1:]))",
                 "marts", "--out", str(out), "--road-cells-shoes", "5"],
                check=False, cwd=tmp_path, capture_output=True, text=True, timeout=120,
            )
            assert publish.returncode == 0, publish.stderr
            assert os.stat(path).st_ino != inode
            assert connection.execute(sa.text(shoes_drawn)).scalar() == 40  # still the old file
    finally:
        held.dispose()  # closes the pooled DuckDB connection: the old file is gone
    fresh = read_only_engine(path)
    try:
        with fresh.connect() as connection:
            assert connection.execute(sa.text(shoes_drawn)).scalar() == 5
    finally:
        fresh.dispose()


def test_a_pool_s_connections_at_once_each_answer_from_its_own_thread(warehouse):
    """A BI server runs a dashboard's charts in threads of one process, each on a connection of the
    engine's pool: the second connection failed while the first was open."""
    pooled = read_only_engine(warehouse)
    answers, started = [], threading.Barrier(3, timeout=60)

    def chart():
        try:
            with pooled.connect() as connection:
                started.wait()  # every connection open before any query
                answers.append(connection.execute(sa.text("SELECT count(*) FROM rounds")).scalar())
        except Exception as error:
            started.abort()
            answers.append(error)

    try:
        threads = [threading.Thread(target=chart) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        with pooled.connect() as connection:
            rounds = connection.execute(sa.text("SELECT sum(rounds) FROM shoe_summary")).scalar()
    finally:
        pooled.dispose()
    assert answers == [rounds] * 3 and rounds > 0
