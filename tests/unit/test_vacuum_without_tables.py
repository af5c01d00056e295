"""`baccarat vacuum --out` (and `runs --out`) a folder that holds no table (a typo, /etc, the marts/ folder)
printed nothing and exited 0, so a weekly cron line with the wrong --out succeeded forever; `verify`
refuses the same folder."""

import pytest


@pytest.mark.parametrize("dry_run", ["--dry-run", "--no-dry-run"])
def test_vacuum_of_a_folder_without_tables_was_a_silent_success(cli, tmp_path, dry_run):
    (tmp_path / "notes.txt").write_text("not a table\n")
    status, out, err = cli("vacuum", "--out", tmp_path, dry_run)
    assert (status, out) == (2, "") and err.count("\n") == 1
    assert f"error: no table in {tmp_path}: nothing to vacuum (is --out the folder or URI of the tables?)" in err
    assert [path.name for path in tmp_path.iterdir()] == ["notes.txt"]


@pytest.mark.parametrize("json", [[], ["--json"]])
def test_runs_of_a_folder_without_tables_was_a_silent_success(cli, tmp_path, json):
    """`baccarat runs --out` a folder that holds no table printed an empty list, exit 0, as vacuum did."""
    (tmp_path / "notes.txt").write_text("not a table\n")
    status, out, err = cli("runs", "--out", tmp_path, *json)
    assert (status, out) == (2, "") and err.count("\n") == 1
    assert f"error: no table in {tmp_path}: nothing to list (is --out the folder or URI of the tables?)" in err
    assert [path.name for path in tmp_path.iterdir()] == ["notes.txt"]
