"""A round_ev file committed before count systems had bounds (a tag of 10**20) holds true counts the
marts' count levels cannot hold: `baccarat marts` stopped on DuckDB's cast in prep_count_levels.sql, a
traceback. The file is found by its Parquet footer before any mart is built: one line, exit 1, naming the
run and the file, and `baccarat verify` says the same."""

import pyarrow.compute as pc
import pyarrow.parquet as pq
from spark_jobs import simulate

from pipeline.composition import job as composition_job
from pipeline.jobs import run_job
from pipeline.storage import Store

ROUND_EV = composition_job.ROUND_EV


def commit_unbounded_counts(store: Store, run_id: str) -> str:
    """Rewrite the run's round_ev file with its true counts times 10**20, as a tag of 10**20 dealt them, and
    commit it in its place; returns its location."""
    (entry,) = store.partition_files(ROUND_EV, run_id)
    rows = pq.read_table(store.fs_path(entry["path"]), filesystem=store.filesystem)
    for index, name in enumerate(rows.column_names):
        if name.startswith("true_count_"):
            rows = rows.set_column(index, rows.schema.field(name), pc.multiply(rows[name], 1e20))
    path = entry["path"].replace(".parquet", "-old.parquet")
    pq.write_table(rows, store.fs_path(path), filesystem=store.filesystem)
    size = store.filesystem.get_file_info(store.fs_path(path)).size
    written = {"path": path, "size": size, "rows": rows.num_rows}
    schema = store.delta_table(ROUND_EV).schema().to_arrow()
    store.commit_partition(ROUND_EV, run_id, [written], schema, ("test:old", 2))
    return store.location(path)


def test_a_round_ev_file_committed_before_the_count_bounds_was_a_traceback_in_marts(spark, cli, tmp_path):
    simulate(spark, tmp_path, rules="punto_banco", seed=5, shoes=4, partitions=1, run_id="old-counts")
    store = Store.parse(str(tmp_path))
    run_job(spark, composition_job.plan_for(store, "old-counts", 3, "banker_player_simple", partitions=1))
    where = commit_unbounded_counts(store, "old-counts")
    status, out, err = cli("marts", "--out", tmp_path)
    assert (status, out) == (1, "") and err.count("\n") == 1 and "Traceback" not in err, err
    status, problems, _ = cli("verify", "--out", tmp_path)  # verify prints each problem on stdout
    assert status == 1 and problems.count("\n") == 1
    for line in (err, problems):
        assert f"run 'old-counts': {where}: column 'true_count_banker_player_simple' reaches" in line
        assert "past the bound 432,640" in line and "repair: baccarat composition --run-id old-counts" in line
    assert not (tmp_path / "marts").exists()
