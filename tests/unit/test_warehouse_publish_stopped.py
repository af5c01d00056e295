"""A publish of the warehouse stopped (Ctrl-C, SIGTERM) while its file is built leaves no folder of its own
in `<target>.publishes` (one stayed, empty or half written, until a publish ten minutes later); stopped once
`target` points at the new file, that file stays, as readers may have it open (pipeline/marts/publish.py)."""

import pytest

from pipeline.marts import publish
from pipeline.storage import Store


def stopped(*args):
    raise KeyboardInterrupt


def test_a_publish_stopped_while_building_leaves_no_folder(tmp_path, monkeypatch):
    out, target = Store.parse(str(tmp_path)), tmp_path / "warehouse.duckdb"
    publish.publish_warehouse(out, target)
    first = target.resolve()
    monkeypatch.setattr(publish, "_build", stopped)
    with pytest.raises(KeyboardInterrupt):
        publish.publish_warehouse(out, target)
    assert target.resolve() == first
    assert list((tmp_path / ("warehouse.duckdb" + publish.PUBLISHES)).iterdir()) == [first.parent]


def test_a_publish_stopped_once_pointed_keeps_its_file(tmp_path, monkeypatch):
    out, target = Store.parse(str(tmp_path)), tmp_path / "warehouse.duckdb"
    monkeypatch.setattr(publish, "_remove_older_publishes", stopped)
    with pytest.raises(KeyboardInterrupt):
        publish.publish_warehouse(out, target)
    assert target.resolve().is_file()
