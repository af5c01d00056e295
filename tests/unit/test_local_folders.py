"""A local OUT whose path holds a percent escape (`da%20ta`): deltalake read it as `da ta`, so a simulate
dealt every shoe, wrote its files under `da%20ta` and then failed to commit (exit 1), leaving a stray
commit behind. Such a folder is refused in one line before anything is written; a file:// URI's escapes
are decoded as RFC 8089 has them. A local OUT inside a file is bad input too."""

import pytest

from pipeline.errors import BaccaratError
from pipeline.storage import Store


def test_a_local_folder_with_a_percent_escape_was_committed_elsewhere(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, out, err = cli("simulate", "--shoes", "5", "--seed", "1", "--out", "da%20ta")
    assert (status, out, err.count("\n")) == (2, "", 1) and "two hex digits" in err, err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("text", ["/tmp/da%20ta", "/tmp/a%2Fb/data", "file:///tmp/da%2520ta"])
def test_percent_escapes_in_a_local_path_are_refused(text):
    with pytest.raises(BaccaratError, match="two hex digits") as error:
        Store.parse(text)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize(("text", "path"), [
    ("/tmp/50%", "/tmp/50%"),
    ("/tmp/a%zz b#é", "/tmp/a%zz b#é"),
    ("file:///tmp/da%20ta", "/tmp/da ta"),
])
def test_other_percent_signs_and_file_uris_escapes_are_kept(text, path):
    assert Store.parse(text).uri == path


def test_an_out_inside_a_file_was_a_failure_of_the_world(cli, tmp_path):
    """`--out FILE/sub` ended in status 1 ("not writable: Not a directory"): it is bad input, 2, in one line."""
    (tmp_path / "afile").write_text("")
    status, out, err = cli("simulate", "--shoes", "5", "--seed", "1", "--out", tmp_path / "afile" / "sub")
    assert (status, out) == (2, "")
    assert err == f"error: output path {tmp_path}/afile/sub is inside {tmp_path}/afile, a file, not a folder\n"


@pytest.mark.parametrize("command", [["simulate", "--shoes", "5", "--seed", "1"], ["run", "--shoes", "5"]])
def test_an_out_that_cannot_be_made_was_a_failure_of_the_world_where_other_unwritable_paths_are_bad_input(cli,
                                                                                                         command):
    """`--out /proc/x` exited 1 while `marts --warehouse /proc/x`, `report --page /proc/x` and
    `bi superset-bundle -o /proc/x` exit 2: a local place the user named that cannot be written is bad input."""
    status, out, err = cli(*command, "--out", "/proc/baccarat-data")
    assert (status, out, err) == (2, "", "error: output path /proc/baccarat-data is not writable: No such file or "
                                         "directory\n")


def test_verify_of_a_folder_holding_no_table_said_every_log_file_and_contract_checks_out(cli, tmp_path):
    """`baccarat verify --out /proc` (or a mistyped --out that exists) ended 'verified 0 runs in /proc:
    every log, file and contract checks out' with status 0, so a cron job checking the wrong folder passed."""
    (tmp_path / "notes.txt").write_text("not a table")
    status, out, err = cli("verify", "--out", tmp_path)
    assert (status, out) == (2, "") and err == f"error: no table in {tmp_path}: nothing to verify (is --out the " \
                                               "folder or URI of the tables?)\n"
    assert sorted(tmp_path.iterdir()) == [tmp_path / "notes.txt"]


def test_a_local_folder_with_a_backslash_left_a_log_verify_called_damaged(cli, tmp_path):
    """`simulate --out 'back\\x'` wrote its files under back\\x, its commit under back/x (deltalake reads a
    backslash as '/'), failed (exit 1) and left a log whose repair, simulate again, failed the same way."""
    status, out, err = cli("simulate", "--shoes", "5", "--seed", "1", "--out", tmp_path / "back\\x")
    assert (status, out, err.count("\n")) == (2, "", 1) and "backslash" in err, err
    assert list(tmp_path.iterdir()) == []



@pytest.mark.parametrize("name", ["marts", "shoes"])
@pytest.mark.parametrize("command", [["runs"], ["verify"], ["vacuum"], ["simulate", "--shoes", "5", "--seed", "1"]])
def test_a_file_where_a_table_folder_belongs_was_a_failure_of_the_world(cli, tmp_path, name, command):
    """A file named `marts` (or `shoes`) in OUT: every command, simulate too, ended in status 1 with the
    listing's errno ('Cannot list directory .../marts ... Not a directory'); it is bad input, 2, in one line."""
    (tmp_path / name).write_text("kept\n")
    status, out, err = cli(*command, "--out", tmp_path)
    assert (status, out) == (2, "")
    assert err == f"error: {tmp_path / name} is a file where the folder of the {name!r} tables belongs: move it away\n"
    assert [p.name for p in tmp_path.iterdir()] == [name] and (tmp_path / name).read_text() == "kept\n"


@pytest.mark.parametrize("command", [["simulate", "--shoes", "5", "--seed", "1"], ["runs"], ["marts"]])
@pytest.mark.parametrize("below", ["", "data"])
def test_an_out_through_a_symbolic_link_loop_said_file_exists_or_no_folder(cli, tmp_path, command, below):
    """`--out loop` (loop -> loop2 -> loop) was 'not writable: File exists' from a writer and 'no output
    folder' from a reader: the link that leads nowhere is named, and nothing is written."""
    (tmp_path / "loop").symlink_to("loop2")
    (tmp_path / "loop2").symlink_to("loop")
    out = tmp_path / "loop" / below if below else tmp_path / "loop"
    status, stdout, err = cli(*command, "--out", out)
    assert (status, stdout, err.count("\n")) == (2, "", 1), err
    assert f"{tmp_path / 'loop'} is a symbolic link that leads nowhere" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["loop", "loop2"]
