"""Two `baccarat marts` publishing the warehouse at once (pipeline/marts/publish.py): neither removes the
other's file while that one is still being published."""

import multiprocessing

import pytest

from pipeline.marts import publish


def _hold_a_publish(folder, ready, done) -> None:
    with publish._publishing(folder):
        (folder / "warehouse.duckdb").write_text("written, not yet pointed at")
        ready.set()
        done.wait(30)


@pytest.fixture
def publishes(tmp_path):
    """The warehouse's path, pointed at publish `ours`, and its publishes' folder."""
    folder = tmp_path / ("warehouse.duckdb" + publish.PUBLISHES)
    ours = folder / "20261202T050000-ours" / "warehouse.duckdb"
    ours.parent.mkdir(parents=True)
    ours.write_text("ours")
    target = tmp_path / "warehouse.duckdb"
    target.symlink_to(ours.relative_to(tmp_path))
    return target, ours, folder


def test_a_publish_removed_another_publishs_finished_file_before_that_one_pointed_the_warehouse_at_it(publishes):
    """Publish B has written its file and holds its folder's lock; publish A, which pointed the warehouse at
    its own file, cleans up: B's folder stays (B's chmod and seal then failed with 'No such file or
    directory', exit 2). An ended publish's superseded folder is removed."""
    target, ours, folder = publishes
    other, ended = folder / "20261202T050001-other", folder / "20261202T045959-ended"
    (ended / "warehouse.duckdb").parent.mkdir()
    (ended / "warehouse.duckdb").write_text("superseded")
    context = multiprocessing.get_context("spawn")
    ready, done = context.Event(), context.Event()
    holder = context.Process(target=_hold_a_publish, args=(other, ready, done))
    holder.start()
    try:
        assert ready.wait(30)
        publish._remove_older_publishes(target, ours)
        assert sorted(path.name for path in folder.iterdir()) == [ours.parent.name, other.name]
    finally:
        done.set()
        holder.join(30)
    publish._remove_older_publishes(target, ours)
    assert [path.name for path in folder.iterdir()] == [ours.parent.name]
