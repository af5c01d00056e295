"""Files a user names (pipeline/user_files.py): every option that reads one refuses what is not a
regular file, and more than it reads, in one line and promptly; every option that writes one refuses
a place no file can go, in one line, writing nothing."""

import os
from pathlib import Path

import pytest
from cli_process import baccarat, one_line_refusal

from pipeline.cli import main
from pipeline.cli.analytics import ROADS_INPUT_BYTES
from pipeline.user_files import CONFIG_FILE_BYTES, output_folder

X = "{file}"
READERS = {  # each option that reads a file, the file being X
    "rules": ["odds", "--rules", X],
    "simulate rules": ["simulate", "--shoes", "5", "--seed", "1", "--rules", X],
    "player strategy": ["odds", "--rules", "chemin_de_fer", "--player-strategy", X,
                        "--banker-strategy", "chemin_de_fer_banker_always_draws"],
    "banker strategy": ["odds", "--rules", "chemin_de_fer", "--player-strategy", "chemin_de_fer_player_draws_at_5",
                        "--banker-strategy", X],
    "banque player strategies": ["odds", "--rules", "banque", "--player-strategy", f"banque_player_draws_at_5,{X}"],
    "banque policy": ["odds", "--rules", "banque", "--banker-policy", X],
    "roads input": ["roads", "--input", X],
    "docs check": ["docs", "--check", "--path", X],
}
LIMITS = {"roads input": ROADS_INPUT_BYTES}  # the others read configuration (YAML) or the dictionary


def with_file(args: list[str], path) -> list[str]:
    return [arg.replace(X, str(path)) for arg in args]


@pytest.mark.parametrize("option", READERS)
def test_a_fifo_is_refused_at_once_not_waited_on(option, tmp_path):
    fifo = tmp_path / "input.fifo"
    os.mkfifo(fifo)
    done = baccarat(with_file(READERS[option], fifo), tmp_path)
    one_line_refusal(done.returncode, done.stdout, done.stderr, f"{str(fifo)!r} is not a regular file")


@pytest.mark.parametrize("option", READERS)
def test_dev_zero_is_refused_not_read_until_the_memory_runs_out(option, tmp_path):
    done = baccarat(with_file(READERS[option], "/dev/zero"), tmp_path)
    one_line_refusal(done.returncode, done.stdout, done.stderr, "'/dev/zero' is not a regular file")


@pytest.mark.parametrize("option", READERS)
def test_a_folder_is_refused(option, tmp_path, capsys):
    status = main(with_file(READERS[option], tmp_path))
    one_line_refusal(status, *capsys.readouterr(), f"{str(tmp_path)!r} is a folder, not a")


@pytest.mark.parametrize("option", READERS)
def test_a_file_over_the_cap_is_refused_unread(option, tmp_path, capsys):
    limit = LIMITS.get(option, CONFIG_FILE_BYTES)
    big = tmp_path / "big"
    big.write_bytes(b"#" * (limit + 1))
    status = main(with_file(READERS[option], big))
    one_line_refusal(status, *capsys.readouterr(), f"{str(big)!r} is larger than {limit >> 20} MiB")


def test_a_file_at_the_cap_is_read(tmp_path, capsys):
    comment = tmp_path / "comment.yaml"
    comment.write_bytes(b"#" * CONFIG_FILE_BYTES)
    status = main(["odds", "--rules", str(comment)])
    one_line_refusal(status, *capsys.readouterr(), "expected a mapping at the top of")


WRITERS = {  # each option that writes a file, or files into a folder, named X
    "report page": ["report", "--out", "{tmp}/data", "--page", X],
    "docs path": ["docs", "--path", X],
    "strategies folder": ["solve", "--write-strategies", X],
}
PLACES = {  # where no file can go, and what the refusal says
    "root": ("/", "is a folder"),
    "folder": ("{tmp}", "is a folder"),
    "under a file": ("{tmp}/plain/page.html", "plain is a file, not a folder"),
    "unwritable": ("/sys/baccarat-test/page.html", "cannot write"),
    "empty": ("", "empty"),
    "a broken link": ("{tmp}/dangling", "is a broken symbolic link (to "),  # said 'File exists'
}


# A folder is what --write-strategies takes; the report reads its warehouse before it writes (an
# unwritable page: tests/test_report.py).
CASES = [(option, place) for option in WRITERS for place in PLACES
         if (option, place) not in {("strategies folder", "root"), ("strategies folder", "folder"),
                                    ("report page", "unwritable")}]


@pytest.mark.parametrize(("option", "place"), CASES)
def test_a_place_no_file_can_go_is_one_line_and_nothing_is_written(option, place, tmp_path, capsys):
    path, message = PLACES[place]
    (tmp_path / "plain").write_text("kept\n")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere" / "x")
    args = [arg.replace(X, path).replace("{tmp}", str(tmp_path)) for arg in WRITERS[option]]
    before = sorted(tmp_path.rglob("*"))
    status = main(args)
    one_line_refusal(status, *capsys.readouterr(), message)
    assert sorted(tmp_path.rglob("*")) == before and (tmp_path / "plain").read_text() == "kept\n"


def test_a_file_with_thousands_of_problems_names_the_first_few(tmp_path, capsys):
    """A 30 KB strategy file of aliases printed a 700 KB line, one problem per cell."""
    strategy = tmp_path / "aliases.yaml"
    strategy.write_text("x: &x 1\nname: aliases\nside: player\ncells: [" + ",".join(["*x"] * 10_000) + "]\n")
    status = main(["odds", "--rules", "chemin_de_fer", "--player-strategy", str(strategy),
                   "--banker-strategy", "chemin_de_fer_banker_always_draws"])
    out, err = capsys.readouterr()
    one_line_refusal(status, out, err, "cells.0: Input should be a valid dictionary")
    assert len(err) < 2_000 and err.rstrip().endswith("more") and "cells.9999" not in err


@pytest.mark.parametrize("option", [*(option for option in WRITERS if option != "strategies folder"), "superset bundle"])
def test_a_file_of_the_user_s_was_replaced_by_the_output(option, tmp_path, capsys):
    """`baccarat report --page /etc/passwd` replaced the file with the report, exit 0 (as root, the
    system's). A file that is there is replaced only when empty or written by the same command before."""
    notes = tmp_path / "notes.txt"
    notes.write_text("kept\n")
    writers = WRITERS | {"superset bundle": ["bi", "superset-bundle", "--out", "{tmp}/data", "-o", X]}
    args = [arg.replace(X, str(notes)).replace("{tmp}", str(tmp_path)) for arg in writers[option]]
    one_line_refusal(main(args), *capsys.readouterr(), f"{notes}' is a file this command did not write: it is left "
                                                       "as it is")
    assert notes.read_text() == "kept\n"


def test_a_file_the_command_wrote_or_an_empty_one_is_replaced(tmp_path, capsys):
    from test_superset_bundle import published_like

    warehouse = published_like(tmp_path / "data")
    bundle, empty = tmp_path / "bundle.zip", tmp_path / "empty.zip"
    empty.touch()
    for target in (bundle, bundle, empty):
        assert main(["bi", "superset-bundle", "--warehouse", str(warehouse), "-o", str(target)]) == 0
    assert empty.read_bytes() == bundle.read_bytes()
    capsys.readouterr()


@pytest.mark.parametrize("contents", ["my notes\n", "- a list\n", "name: [unclosed\n", "#" * 5000 + "\n"],
                         ids=["text", "a list", "bad YAML", "a long comment"])
def test_a_file_of_the_user_s_in_the_strategies_folder_is_refused_as_one(contents, tmp_path, capsys):
    """`solve --write-strategies DIR` over a same-named file of the user's kept it (exit 2), but the line it
    said was that file's YAML or schema errors, read as if it were a strategy, not that it is the user's
    file; the refusal is the other outputs' (user_files.output_file), and nothing is written."""
    mine = tmp_path / "chemin_de_fer_parlor_equilibrium_infinite_total_banker.yaml"
    mine.write_text(contents)
    status = main(["solve", "--rules", "chemin_de_fer_parlor", "--decks", "infinite", "--write-strategies",
                   str(tmp_path)])
    one_line_refusal(status, *capsys.readouterr(), f"{mine}' is a file this command did not write: it is left as it is")
    assert mine.read_text() == contents and sorted(tmp_path.iterdir()) == [mine]


def test_an_empty_file_in_the_strategies_folder_is_replaced(tmp_path, capsys):
    empty = tmp_path / "chemin_de_fer_parlor_equilibrium_infinite_total_banker.yaml"
    empty.touch()
    assert main(["solve", "--rules", "chemin_de_fer_parlor", "--decks", "infinite", "--write-strategies",
                 str(tmp_path)]) == 0
    assert empty.read_text().startswith("# Written by `baccarat solve --write-strategies`.\nname: ")


def test_the_root_folder_as_an_output_folder_was_a_traceback():
    """`solve --write-strategies /`: the root has no folder above it, and looking for one raised StopIteration."""
    assert output_folder("/", "--write-strategies") == Path("/")
