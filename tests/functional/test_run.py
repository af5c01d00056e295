"""`baccarat run`, the whole pipeline in one command."""

import polars as pl
import pytest
from cli_process import with_the_reader_gone, without_progress

from pipeline.runs import committed_runs
from pipeline.storage import WAREHOUSE, Store


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


@pytest.mark.slow  # an exit-code test whose `baccarat run` starts its own driver (docs/testing.md)
def test_run_piped_to_head_skipped_the_marts_and_the_report(tmp_path, cli):
    """`baccarat run | head -1` died at its second line with status 141: committed rounds, no marts, no
    warehouse, no report. A reader that leaves no longer abandons the work; the status is still 141."""
    out = tmp_path / "data"
    status, err = with_the_reader_gone(["run", "--shoes", "20", "--seed", "5", "--out", str(out)], tmp_path,
                                       timeout=600)
    assert (status, without_progress(err.decode())) == (141, "")
    assert (out / WAREHOUSE).is_file() and (out / "report" / "index.html").is_file()
    assert pl.read_delta(str(out / "marts" / "bet_performance"))["run_id"].unique().to_list() == [
        "punto_banco-s5-n20"]
    assert cli("verify", "--out", out)[0] == 0
