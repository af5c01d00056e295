"""Opening the published warehouse for readers (pipeline/marts/warehouse.py): a Ctrl-C while it is
opened becomes exit 130 at the command line."""

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

