"""`baccarat run`, the whole pipeline in one command, and `baccarat docs`."""

import re
from pathlib import Path

import polars as pl

from pipeline.runs import committed_runs
from pipeline.storage import WAREHOUSE, Store

DICTIONARY = Path(__file__).parents[2] / "docs" / "tables.md"


def test_run_builds_everything_and_says_where(spark, cli, tmp_path):
    status, out, err = cli("run", "--shoes", 25, "--seed", 5, "--out", tmp_path)
    assert status == 0, err
    assert committed_runs(Store.parse(str(tmp_path))) == ["punto_banco-s5-n25"]
    assert (tmp_path / WAREHOUSE).is_file()
    assert pl.read_delta(str(tmp_path / "marts" / "bet_performance"))["run_id"].unique().to_list() == [
        "punto_banco-s5-n25"]
    page = tmp_path / "report" / "index.html"
    assert page.is_file() and "punto_banco-s5-n25" in page.read_text(encoding="utf-8")
    assert "run 'punto_banco-s5-n25' is ready" in out and str(page) in out and "baccarat sql" in out


def test_run_again_is_idempotent(spark, cli, tmp_path):
    assert cli("run", "--shoes", 20, "--seed", 6, "--out", tmp_path)[0] == 0
    first = {p: p.read_bytes() for p in (tmp_path / "rounds").rglob("*.parquet")}
    status, out, _ = cli("run", "--shoes", 20, "--seed", 6, "--out", tmp_path)
    assert status == 0 and "already committed with these parameters" in out
    assert {p: p.read_bytes() for p in (tmp_path / "rounds").rglob("*.parquet")} == first


def test_run_refuses_bad_input_before_doing_anything(cli, tmp_path):
    status, _, err = cli("run", "--shoes", 0, "--out", tmp_path)
    assert status == 2 and "Invalid value for '--shoes'" in err
    assert list(tmp_path.iterdir()) == []


def test_docs_check_passes_on_the_repository(cli):
    status, out, _ = cli("docs", "--check", "--path", DICTIONARY)
    assert status == 0 and "is up to date" in out


def test_docs_writes_and_check_notices_a_stale_file(cli, tmp_path):
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
    assert status == 2 and out == "" and err.count("\n") == 1 and f"cannot write {tmp_path}" in err
    status, out, err = cli("docs", "--path", "/proc/baccarat/tables.md")
    assert status == 2 and out == "" and err.count("\n") == 1 and "cannot write /proc/baccarat/tables.md" in err


def test_every_file_the_readme_links_to_is_in_the_repository():
    readme = (DICTIONARY.parents[1] / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(((?!https?://|#)[^)#]+)", readme)
    assert "docs/rules.md" in links
    assert [link for link in links if not (DICTIONARY.parents[1] / link).exists()] == []
    assert "shared/" not in readme
