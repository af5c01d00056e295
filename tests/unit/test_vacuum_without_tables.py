"""`baccarat vacuum --out` a folder that holds no table (a typo, /etc, the marts/ folder) printed nothing and
exited 0, so a weekly cron line with the wrong --out succeeded forever; `verify` refuses the same folder.
(`runs` lists nothing there, exit 0: a store a first job is still writing into holds no table yet, and a
monitor must see no run, not an error; tests/functional/test_airflow.py relies on it.)"""

import pytest


@pytest.mark.parametrize("dry_run", ["--dry-run", "--no-dry-run"])
def test_vacuum_of_a_folder_without_tables_was_a_silent_success(cli, tmp_path, dry_run):
    (tmp_path / "notes.txt").write_text("not a table\n")
    status, out, err = cli("vacuum", "--out", tmp_path, dry_run)
    assert (status, out) == (2, "") and err.count("\n") == 1
    assert f"error: no table in {tmp_path}: nothing to vacuum (is --out the folder or URI of the tables?)" in err
    assert [path.name for path in tmp_path.iterdir()] == ["notes.txt"]



def test_runs_of_a_store_no_job_has_committed_to_yet_lists_no_run(cli, tmp_path):
    (tmp_path / "rounds").mkdir()  # a first job's files, before its commit made the table
    status, out, err = cli("runs", "--out", tmp_path, "--json")
    assert (status, out, err) == (0, "", "")
