"""`baccarat sql` on a warehouse whose view reads a damaged data file exited 2, as if the query were bad
input: a file that is damaged under the warehouse is a failure of the world (exit 1), and a query that is
wrong stays bad input."""

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.errors import BaccaratError, WorldFailure
from pipeline.marts import shell
from pipeline.marts.bounds import Bounds


def damage_truncated(path):
    path.write_bytes(path.read_bytes()[:1000])


def damage_overwritten(path):
    content = bytearray(path.read_bytes())
    content[4:4 + 64] = b"\xff" * 64  # the first page header, just after the magic bytes
    path.write_bytes(bytes(content))


@pytest.fixture
def rounds_view(tmp_path):
    file = tmp_path / "rounds.parquet"
    pq.write_table(pa.table({"shoe": list(range(50_000)), "outcome": ["B", "P"] * 25_000}), file)
    con = duckdb.connect()
    con.execute(f"CREATE VIEW rounds AS SELECT * FROM read_parquet('{file}')")
    con.execute(f"SET allowed_paths = ['{file}']")  # confined as the warehouse's readers are
    con.execute("SET enable_external_access = false")
    return con, file


@pytest.mark.parametrize("damage", [damage_truncated, damage_overwritten])
def test_a_damaged_file_under_a_view_was_bad_input_not_a_failure_of_the_world(rounds_view, damage, capsys):
    con, file = rounds_view
    damage(file)
    with pytest.raises(WorldFailure) as failed:
        shell.run_one(con, Bounds(timeout=60), "SELECT * FROM rounds")
    assert failed.value.exit_status == 1 and "\n" not in str(failed.value)


@pytest.mark.parametrize("query", ["SELECT nope FROM rounds", "SELECT error('a bad row') FROM rounds",
                                   "SELECT outcome::INTEGER FROM rounds", "SELECT * FROM read_parquet('x.parquet')"])
def test_a_wrong_query_of_a_sound_file_stays_bad_input(rounds_view, query, capsys):
    con, _ = rounds_view
    with pytest.raises(BaccaratError) as refused:
        shell.run_one(con, Bounds(timeout=60), query)
    assert refused.value.exit_status == 2


def test_a_sound_data_file_read_the_wrong_way_stays_bad_input(rounds_view):
    con, file = rounds_view
    with pytest.raises(BaccaratError):
        shell.run_one(con, Bounds(timeout=60), f"SELECT * FROM read_text('{file}')")


def test_a_truncated_file_of_a_run_names_verify_as_a_file_gone_does(tmp_path):
    """A truncated rounds file was DuckDB's line alone ("No magic bytes found ..."), where a file gone names
    the run and `baccarat verify`, which names the repair (a new user's trial)."""
    file = tmp_path / "data" / "rounds" / "run_id=r1" / "part-0.parquet"
    file.parent.mkdir(parents=True)
    pq.write_table(pa.table({"shoe_id": list(range(50_000))}), file)
    con = duckdb.connect()
    con.execute(f"CREATE VIEW rounds AS SELECT * FROM read_parquet('{file}')")
    damage_truncated(file)
    with pytest.raises(WorldFailure) as failed:
        shell.run_one(con, Bounds(timeout=60), "SELECT * FROM rounds")
    assert str(failed.value).endswith(
        f"; run 'r1' has a damaged file: `baccarat verify --out {tmp_path / 'data'}` names its repair"), failed.value
    assert "\n" not in str(failed.value)


def test_duckdbs_advice_to_set_a_setting_is_not_passed_on_to_a_reader_who_cannot(rounds_view):
    """A deeply nested query ended in DuckDB's 'Use "SET max_expression_depth TO x" to increase the maximum
    expression depth', and the readers refuse SET (a new user's trial)."""
    con, _ = rounds_view
    with pytest.raises(BaccaratError) as refused:
        shell.run_one(con, Bounds(timeout=60), "SELECT " + "(" * 1100 + "1" + ")" * 1100)
    assert str(refused.value) == ("Parser Error: Max expression depth limit of 1000 exceeded. "
                                  "(a reader of the warehouse takes no SET)")
