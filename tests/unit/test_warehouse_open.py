"""Opening the published warehouse for readers (pipeline/marts/warehouse.py): a Ctrl-C while it is
opened becomes exit 130 at the command line."""

import shutil

import duckdb
import pytest

from pipeline.marts import warehouse


def test_ctrl_c_while_the_warehouse_is_confined_is_130_from_main_and_the_connection_is_closed(cli, tmp_path,
                                                                                            monkeypatch):
    """open_warehouse leaves the Ctrl-C (DuckDB's RuntimeError) to main(), the one place that words it."""
    path = tmp_path / "warehouse.duckdb"
    duckdb.connect(str(path)).close()
    opened = []

    def interrupted(con, stable):
        opened.append(con)
        raise RuntimeError("Query interrupted")

    monkeypatch.setattr(warehouse, "_confine", interrupted)
    assert cli("sql", "--warehouse", path, "SELECT 1") == (130, "", "error: interrupted\n")
    [con] = opened
    with pytest.raises(duckdb.ConnectionException, match="closed"):
        con.execute("SELECT 1")



def test_a_publish_replacing_the_file_while_a_reader_opens_it_is_read_from_the_new_file(tmp_path, monkeypatch):
    """A reader resolves the warehouse's link, then a publish points the link at its new file and removes
    the old one before the reader opens it: the reader opens the new file, where it failed with
    'database does not exist' (exit 1)."""
    target = tmp_path / "warehouse.duckdb"
    publishes = {name: tmp_path / "warehouse.duckdb.publishes" / name / "warehouse.duckdb" for name in ("old", "new")}
    for name, published in publishes.items():
        published.parent.mkdir(parents=True)
        with duckdb.connect(str(published)) as con:
            con.execute(f"CREATE TABLE publish AS SELECT '{name}' AS name")
    target.symlink_to(publishes["old"].relative_to(tmp_path))
    check_seal = warehouse.check_seal

    def publish_meanwhile(path, published):
        if published == publishes["old"]:
            target.unlink()
            target.symlink_to(publishes["new"].relative_to(tmp_path))
            shutil.rmtree(publishes["old"].parent)
        check_seal(path, published)

    monkeypatch.setattr(warehouse, "check_seal", publish_meanwhile)
    con = warehouse.open_warehouse(target)
    try:
        assert con.execute("SELECT name FROM publish").fetchall() == [("new",)]
    finally:
        con.close()
