"""A repair that cannot move a damaged log's entries aside (the log folder immutable, `chattr +i`, or on a
read-only mount) failed in one line, and left an empty `_delta_log.damaged-*` folder behind it. Nothing is
left when nothing was moved; a folder that holds entries moved before the refusal is kept. No JVM."""

import errno

import pyarrow as pa
import pytest

from pipeline.storage import StorageError, Store

SCHEMA = pa.schema({"shoe_id": pa.int64(), "run_id": pa.string()})


class MovesRefused:
    """OUT's filesystem, but every move after the first `allowed` is refused, as `chattr +i _delta_log` refuses
    it (pyarrow's words)."""

    def __init__(self, filesystem, allowed: int):
        self._filesystem, self._allowed = filesystem, allowed

    def __getattr__(self, name):
        return getattr(self._filesystem, name)

    def move(self, source: str, target: str) -> None:
        if self._allowed == 0:
            raise OSError(errno.EPERM, f"Failed renaming '{source}' to '{target}'. Detail: [errno 1] Operation "
                                       "not permitted")
        self._allowed -= 1
        self._filesystem.move(source, target)


# the log: version 0 creates the table, 1 to 3 commit a run each; from the damaged commit 1 on, 3 moves first
@pytest.mark.parametrize(("allowed", "left"), [(0, []), (1, [f"{3:020d}.json"])])
def test_a_log_that_cannot_be_set_aside_leaves_no_empty_folder(tmp_path, allowed, left):
    store = Store.parse(str(tmp_path))
    for shoe in range(3):
        store.write_and_commit("rounds", f"run{shoe}", f"part-{shoe}.parquet", pa.table({"shoe_id": [shoe]}),
                               SCHEMA, ("test", shoe))
    (tmp_path / "rounds" / "_delta_log" / f"{1:020d}.json").write_text("not a commit\n")
    store.__dict__["filesystem"] = MovesRefused(store.filesystem, allowed)
    with pytest.raises(StorageError) as refused:
        store.set_log_aside("rounds")
    message = str(refused.value)
    assert "\n" not in message and "cannot set the damaged log of table 'rounds' aside" in message, message
    assert "Operation not permitted" in message
    asides = sorted((tmp_path / "rounds").glob("_delta_log.damaged-*"))
    assert [sorted(entry.name for entry in aside.iterdir()) for aside in asides] == ([left] if left else [])
