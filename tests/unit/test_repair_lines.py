"""The repair line of a run's round_ev or sessions rows (repair.added_repair): `baccarat composition` or
`backtest` with the options their commit recorded the command was given, quoted so that it pastes; the
wording that leaves the options to the user when the commit recorded none (one made before they were
recorded, or with no options known), or when the table's log cannot be read. Before, every line left them
to the user, who could not paste it, and a guess of other options replaced the rows. No JVM."""

import shlex

import pyarrow as pa
import pytest

from pipeline.repair import added_repair
from pipeline.storage import Store
from pipeline.tasks import options_record

SCHEMA = pa.schema({"system": pa.string(), "run_id": pa.string()})
GIVEN = ("--systems", "flat_banker,martingale_banker", "--bankroll", "500")


def committed(store: Store, table: str, run_id: str, given: tuple[str, ...] | None) -> None:
    entry = store.write_file(table, run_id, f"part-{run_id}-{given is None}.parquet",
                             pa.table({"system": ["flat_banker"]}))
    store.commit_partition(table, run_id, [entry], SCHEMA, ("tests", 1), metadata=options_record(given))


@pytest.fixture
def store(tmp_path) -> Store:
    return Store.parse(str(tmp_path / "my data"))  # a path with a space: the line quotes it


def pasted(store: Store, table: str, run_id: str) -> list[str]:
    """The words of the repair line of the run's rows of `table`, as a shell splits it."""
    return shlex.split(added_repair(store, table, run_id))


def test_the_repair_line_gives_the_options_the_commit_recorded_quoted_to_paste(store):
    committed(store, "sessions", "a", GIVEN)
    committed(store, "round_ev", "a", ())  # a composition given no option: the line gives none either
    assert pasted(store, "sessions", "a") == ["baccarat", "backtest", "--run-id", "a", "--out", store.uri, *GIVEN]
    assert pasted(store, "round_ev", "a") == ["baccarat", "composition", "--run-id", "a", "--out", store.uri]


def test_rows_whose_newest_commit_recorded_no_options_leave_them_to_the_user(store):
    committed(store, "sessions", "a", GIVEN)
    committed(store, "sessions", "b", GIVEN)
    committed(store, "sessions", "a", None)  # a's rows again, by a commit that records none (an earlier version's)
    committed(store, "round_ev", "b", None)
    out = shlex.quote(store.uri)
    assert added_repair(store, "sessions", "a") == (f"baccarat backtest --run-id a --out {out} --systems ... "
                                                    "(with the systems and session options it was run with)")
    assert added_repair(store, "round_ev", "b") == (f"baccarat composition --run-id b --out {out} "
                                                    "(with the --shoes and --counts it was run with)")
    assert pasted(store, "sessions", "b")[-len(GIVEN):] == list(GIVEN)  # b's own record still stands


def test_a_log_that_cannot_be_read_gives_the_line_that_leaves_the_options_to_the_user(store):
    committed(store, "sessions", "a", GIVEN)
    committed(store, "sessions", "b", GIVEN)
    assert pasted(store, "sessions", "b")[-len(GIVEN):] == list(GIVEN)
    (store.local_path("sessions") / "_delta_log" / f"{1:020d}.json").write_text("not a commit\n")
    assert added_repair(store, "sessions", "b").endswith("--systems ... (with the systems and session options it "
                                                         "was run with)")
