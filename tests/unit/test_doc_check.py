"""`baccarat docs --check` over README.md and docs/: the dictionary, every relative link, every command."""

import re
import shlex
from pathlib import Path

import pytest
import typer

from pipeline.dictionary import data_dictionary

ROOT = Path(__file__).resolve().parents[2]
DICTIONARY = ROOT / "docs" / "tables.md"

GOOD = """# Guide

## Object stores (s3://)

See [the rules](rules.md), [a heading](#object-stores-s3), [the README](../README.md#top),
[a site](https://delta.io), ![a picture](report.png) and run `baccarat odds --rules banque`.
In prose, baccarat banque is a game, not a command.

```console
$ baccarat solve --rules chemin_de_fer
[not a link](nowhere.md) and `baccarat nothing` inside a block are output
```
"""


@pytest.fixture
def repository(tmp_path):
    """A repository's documents that pass the check: README.md, docs/tables.md, docs/guide.md, ..."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "tables.md").write_text(data_dictionary(), encoding="utf-8")
    (docs / "guide.md").write_text(GOOD, encoding="utf-8")
    (docs / "rules.md").write_text("# Rules\n", encoding="utf-8")
    (docs / "report.png").write_bytes(b"\x89PNG")
    (tmp_path / "README.md").write_text("# Top\n\n[guide](docs/guide.md#guide)\n", encoding="utf-8")
    return tmp_path


def check(cli, repository):
    return cli("docs", "--check", "--path", repository / "docs" / "tables.md")


def test_documents_whose_links_and_commands_resolve_pass(cli, repository):
    status, out, err = check(cli, repository)
    assert (status, err) == (0, "")
    assert out.splitlines()[1] == (f"every link in {repository}/README.md and {repository}/docs/ resolves, and every "
                                   "baccarat command they name exists")


def test_a_dictionary_outside_a_clone_said_the_clones_documents_were_checked(cli, tmp_path):
    """`baccarat docs --check --path /tmp/work/dict.md` said every link in README.md and docs/ resolves, where
    it had read /tmp/work/*.md and /tmp/README.md, if any."""
    (tmp_path / "work").mkdir()
    assert cli("docs", "--path", tmp_path / "work" / "dict.md")[0] == 0
    status, out, err = cli("docs", "--check", "--path", tmp_path / "work" / "dict.md")
    assert (status, err) == (0, "")
    assert out.splitlines()[1].startswith(f"every link in {tmp_path}/work/ resolves")


def failed_check(cli, repository, document: str, text: str) -> list[str]:
    """The error lines of a check that fails once docs/<document> holds `text`; nothing on stdout."""
    (repository / "docs" / document).write_text(text, encoding="utf-8")
    status, out, err = check(cli, repository)
    assert status == 2 and out == ""
    return err.splitlines()


def test_each_broken_link_or_unknown_command_is_one_line_naming_the_place(cli, repository):
    assert failed_check(cli, repository, "bad.md",
                        "# Bad\n\n[gone](gone.md) and [up](../../outside.md)\n[no anchor](guide.md#nowhere)\n"
                        "`baccarat frobnicate --now`\n\n```bash\ncd /srv && baccarat simulat --shoes 1\n```\n") == [
        "error: docs/bad.md:3: link gone.md: no such file in the repository",
        "error: docs/bad.md:3: link ../../outside.md: points outside the repository",
        "error: docs/bad.md:4: link guide.md#nowhere: no heading with the anchor #nowhere in docs/guide.md",
        "error: docs/bad.md:5: `baccarat frobnicate` is not a baccarat command",
        "error: docs/bad.md:8: `baccarat simulat` is not a baccarat command",
    ]


def test_stale_test_paths_in_docs_are_one_line_each(cli, repository):
    (repository / "tests" / "unit").mkdir(parents=True)
    (repository / "tests" / "unit" / "test_risk.py").write_text("", encoding="utf-8")
    assert failed_check(cli, repository, "moved.md",
                        "# Moved\n\nThe tests (tests/test_risk.py) and tests/unit/test_risk.py, `tests/test_serving.py`;\n"
                        "[tests/gone.py](../tests/gone.py) is a link.\n") == [
        "error: docs/moved.md:3: tests/test_risk.py: no such file in the repository",
        "error: docs/moved.md:3: tests/test_serving.py: no such file in the repository",
        "error: docs/moved.md:4: link ../tests/gone.py: no such file in the repository",
    ]


def test_the_readme_is_checked_too(cli, repository):
    (repository / "README.md").write_text("# Top\n\nSee [the guide](docs/guid.md).\n", encoding="utf-8")
    status, _, err = check(cli, repository)
    assert status == 2 and err == "error: README.md:3: link docs/guid.md: no such file in the repository\n"


def test_a_repeated_heading_is_reached_by_its_numbered_anchor(cli, repository):
    (repository / "docs" / "twice.md").write_text("# Twice\n\n## Speed\n\n## Speed\n\n[second](#speed-1)\n[third](#speed-2)\n",
                                                  encoding="utf-8")
    status, _, err = check(cli, repository)
    assert status == 2 and err.splitlines() == [
        "error: docs/twice.md:8: link #speed-2: no heading with the anchor #speed-2 in docs/twice.md"]


def test_a_stale_dictionary_and_a_broken_link_are_both_reported(cli, repository):
    tables = repository / "docs" / "tables.md"
    tables.write_text(data_dictionary() + "edited by hand\n", encoding="utf-8")
    (repository / "README.md").write_text("# Top\n\n[gone](docs/gone.md)\n", encoding="utf-8")
    status, _, err = check(cli, repository)
    assert status == 2 and err.splitlines() == [
        f"error: {tables} is out of date with schemas/: run `baccarat docs`",
        "error: README.md:3: link docs/gone.md: no such file in the repository"]


def test_the_readme_is_short_and_names_no_file_outside_the_repository():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 300
    assert "shared/" not in readme


def test_the_readme_s_table_of_commands_names_every_command():
    from pipeline.cli import app

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    tabled = re.findall(r"^\| `baccarat ([\w-]+)` \|", readme, re.MULTILINE)
    assert sorted(tabled) == sorted(typer.main.get_command(app).commands)


def bash_commands():
    """(document and line, words) of every `baccarat` line in a bash block of README.md and docs/ that has
    no placeholder (`...`, a NAME in capitals)."""
    for document in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = document.read_text(encoding="utf-8")
        for block in re.findall(r"^```bash\n(.*?)^```", text, re.DOTALL | re.MULTILINE):
            for line in block.splitlines():
                shown = re.match(r"\s*baccarat ([^#|>&;]*)", line)
                words = shlex.split(shown.group(1)) if shown else []
                if words and not any("..." in word or word.isupper() for word in words):
                    yield f"{document.name}: {line.strip()}", words


def test_every_command_a_bash_block_shows_takes_its_options():
    """docs/operations.md's standalone cluster on one machine showed `baccarat simulate --shoes 100000 --master
    spark://127.0.0.1:7077`, which a user running it got back as 'error: Missing option '--seed'.' (exit 2)."""
    from pipeline.cli import app

    commands = typer.main.get_command(app).commands
    refused = []
    for shown, (name, *args) in bash_commands():
        command = commands[name]
        if getattr(command, "commands", None) and args and args[0] in command.commands:
            command, args = command.commands[args[0]], args[1:]
        try:
            command.make_context(name, args)
        except Exception as error:  # click's usage errors, from the click that typer uses
            refused.append(f"{shown}: {error}")
    assert refused == []


def test_docs_writes_and_check_notices_a_stale_or_missing_file(cli, tmp_path):
    target = tmp_path / "tables.md"
    assert cli("docs", "--path", target)[0] == 0
    assert target.read_text(encoding="utf-8") == DICTIONARY.read_text(encoding="utf-8")
    target.write_text(target.read_text(encoding="utf-8") + "edited by hand\n", encoding="utf-8")
    status, _, err = cli("docs", "--check", "--path", target)
    assert status == 2 and err.count("\n") == 1 and "is out of date with schemas/: run `baccarat docs`" in err
    status, _, err = cli("docs", "--check", "--path", tmp_path / "missing.md")
    assert status == 2 and err.count("\n") == 1 and "missing.md does not exist" in err


def test_docs_into_a_folder_or_an_unwritable_place_is_one_line(cli, tmp_path):
    status, out, err = cli("docs", "--path", tmp_path)
    assert status == 2 and out == "" and err.count("\n") == 1 and f"{str(tmp_path)!r} is a folder" in err
    status, out, err = cli("docs", "--path", "/proc/baccarat/tables.md")
    assert status == 2 and out == "" and err.count("\n") == 1 and "cannot write /proc/baccarat/tables.md" in err


@pytest.mark.parametrize("check", [[], ["--check"]])
def test_docs_outside_a_clone_wrote_docs_tables_md_into_the_working_folder(cli, tmp_path, monkeypatch, check):
    """`baccarat docs` run where there is no docs/ folder (not a clone's root) made ./docs/tables.md there; it
    now refuses in one line and writes nothing, and an explicit --path still writes anywhere."""
    monkeypatch.chdir(tmp_path)
    status, out, err = cli("docs", *check)
    assert (status, out) == (2, "") and err.count("\n") == 1
    assert f"no docs/ folder in {tmp_path}" in err and "give --path FILE" in err
    assert list(tmp_path.iterdir()) == []
    assert cli("docs", "--path", "elsewhere/tables.md")[0] == 0
    assert (tmp_path / "elsewhere" / "tables.md").read_text(encoding="utf-8") == DICTIONARY.read_text(encoding="utf-8")
