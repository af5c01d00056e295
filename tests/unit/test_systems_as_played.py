"""A shipped system's file edited after its sessions were played (`conf/systems/flat_banker.yaml`, unit 10
made 5): `baccarat marts` took the unit and bet from the file as it is now, so the drawdowns of sessions
played in stakes of 10 were counted in stakes of 5, without a word (a new user's trial). The backtest's
commit records each system's unit and bet as played, and the marts take them from there. No JVM."""

from decimal import Decimal
from types import SimpleNamespace

import polars as pl
import pyarrow as pa

from pipeline.marts.inputs import RunInput
from pipeline.rule_sets import load_rule_set
from pipeline.storage import Store
from pipeline.systems import SYSTEMS_PLAYED, load_system

SCHEMA = pa.schema({"system": pa.string(), "run_id": pa.string()})
PLAYED = {"flat_banker": {"unit": "20", "bet": "player"}, "follow_the_shoe": {"unit": "10", "bet": None}}


def committed(store: Store, run_id: str, metadata: dict | None) -> None:
    entry = store.write_file("sessions", run_id, f"part-{run_id}-{len(str(metadata))}.parquet",
                             pa.table({"system": ["flat_banker"]}))
    store.commit_partition("sessions", run_id, [entry], SCHEMA, ("tests", 1), metadata=metadata)


def test_a_commit_records_its_metadata_and_the_run_s_newest_commit_is_the_one_read(tmp_path):
    store = Store.parse(str(tmp_path))
    committed(store, "a", {SYSTEMS_PLAYED: PLAYED})
    committed(store, "b", {SYSTEMS_PLAYED: {"flat_banker": {"unit": "30", "bet": "banker"}}})
    assert store.commit_record("sessions", "a", SYSTEMS_PLAYED) == PLAYED
    assert store.commit_record("sessions", "b", SYSTEMS_PLAYED)["flat_banker"]["unit"] == "30"
    committed(store, "a", None)  # a's rows again, by a commit that records nothing (an earlier version's)
    assert store.commit_record("sessions", "a", SYSTEMS_PLAYED) is None
    assert store.commit_record("sessions", "nope", SYSTEMS_PLAYED) is None


def run_of(played) -> RunInput:
    return RunInput(None, SimpleNamespace(run_id="r1", strategies=None), load_rule_set("punto_banco"), {},
                    played=played)


def test_the_marts_take_a_shipped_system_s_unit_and_bet_as_its_sessions_were_played():
    run = run_of(PLAYED)
    found = pl.from_arrow(run.system_terms(["flat_banker", "follow_the_shoe", "my_own"])).rows_by_key(
        "system", named=True)
    assert found["flat_banker"][0]["unit"] == Decimal(20) != load_system("flat_banker").unit
    assert found["flat_banker"][0]["ev_bet"] == float(run.reference.bets["player"].ev)
    assert found["follow_the_shoe"][0]["ev_bet"] is None and found["my_own"][0]["unit"] is None


def test_sessions_committed_before_the_record_take_the_file_as_it_is():
    found = pl.from_arrow(run_of(None).system_terms(["flat_banker"]))
    assert found["unit"].to_list() == [load_system("flat_banker").unit]
