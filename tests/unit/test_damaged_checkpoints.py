"""A table's newest checkpoint that is not Parquet (a torn upload, a disk that filled): deltalake cannot
read the table, and the log's checks passed it by, so `verify` named a repair that set nothing aside,
said 'set aside in None', and every command failed again (a new user's trial). It is the damaged entry
now, and it alone is set aside: the commits it sums up are kept, so the table reads as its newest
version. No JVM."""

import pyarrow as pa
import pytest

from pipeline.repair import set_logs_aside
from pipeline.storage import DamagedLog, Store
from pipeline.storage.delta import CHECKPOINT_INTERVAL
from pipeline.storage.delta_log import DELTA_LOG, LAST_CHECKPOINT

SCHEMA = pa.schema({"shoe_id": pa.int64(), "run_id": pa.string()})
RUNS = CHECKPOINT_INTERVAL + 2  # past the first checkpoint


@pytest.fixture
def store(tmp_path) -> Store:
    store = Store.parse(str(tmp_path))
    for shoe in range(RUNS):
        store.write_and_commit("rounds", f"run{shoe}", f"part-{shoe}.parquet", pa.table({"shoe_id": [shoe]}),
                               SCHEMA, ("test", shoe))
    return store


def checkpoint(tmp_path):
    (found,) = (tmp_path / "rounds" / DELTA_LOG).glob("*.checkpoint.parquet")
    return found


def test_a_torn_checkpoint_is_the_damaged_entry_of_the_log(store, tmp_path):
    checkpoint(tmp_path).write_bytes(b"junk\n")
    with pytest.raises(DamagedLog, match=r"checkpoint \d+ is not a readable Parquet file"):
        store.delta_table("rounds")
    entry, what = store.damaged_log_entry("rounds")
    assert entry == store.location("rounds", DELTA_LOG, checkpoint(tmp_path).name) and what.startswith("checkpoint")


def test_a_torn_checkpoint_alone_is_set_aside_and_the_table_reads_whole(store, tmp_path):
    torn = checkpoint(tmp_path)
    torn.write_bytes(b"junk\n")
    (line,) = set_logs_aside(store, ["rounds"])
    aside = tmp_path / "rounds" / line.rsplit(" ", 1)[1].rsplit("/", 1)[1]
    assert sorted(path.name for path in aside.iterdir()) == sorted([torn.name, LAST_CHECKPOINT])
    assert store.delta_table("rounds").version() == RUNS
    assert store.run_ids("rounds") == {f"run{shoe}" for shoe in range(RUNS)}
    assert set_logs_aside(store, ["rounds"]) == []  # whole now: nothing more to say


def test_a_checkpoint_whose_footer_names_a_column_in_bytes_not_utf8_is_the_damaged_entry(store, tmp_path):
    # a flipped byte in a column's name: pyarrow raised UnicodeDecodeError, and every command a traceback
    torn = checkpoint(tmp_path)
    data = bytearray(torn.read_bytes())
    footer = len(data) - 8 - int.from_bytes(data[-8:-4], "little")
    data[data.index(b"add", footer)] ^= 0xFF
    torn.write_bytes(bytes(data))
    with pytest.raises(DamagedLog, match=r"checkpoint \d+ is not a readable Parquet file \('utf-8' codec"):
        store.delta_table("rounds")


def test_a_checkpoint_hint_whose_checkpoint_is_gone_is_the_damaged_entry_and_alone_is_set_aside(store, tmp_path):
    # a copy that left the checkpoint out: deltalake read no version, verify named a repair that set nothing
    # aside, and the repair it named failed again with the same line
    checkpoint(tmp_path).unlink()
    with pytest.raises(DamagedLog, match=r"_last_checkpoint: the checkpoint hint names checkpoint \d+, which is not"):
        store.delta_table("rounds")
    (line,) = set_logs_aside(store, ["rounds"])
    aside = tmp_path / "rounds" / line.rsplit(" ", 1)[1].rsplit("/", 1)[1]
    assert [path.name for path in aside.iterdir()] == [LAST_CHECKPOINT]
    assert store.delta_table("rounds").version() == RUNS
    assert set_logs_aside(store, ["rounds"]) == []
