"""Where the pipeline keeps the user's files: its own variable, else the XDG folder, else the home's default."""

from pathlib import Path

from pipeline.spark import spark_log_folder
from pipeline.spark_archive import cache_folder


def test_our_variable_wins_over_xdg_and_is_made_absolute(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BACCARAT_LOG_DIR", "logs-here")
    monkeypatch.setenv("XDG_STATE_HOME", "/elsewhere")
    monkeypatch.setenv("BACCARAT_CACHE_DIR", "~/cache-here")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert spark_log_folder() == tmp_path / "logs-here"
    assert cache_folder() == tmp_path / "home" / "cache-here"


def test_xdg_folders_then_the_home_defaults(monkeypatch, tmp_path):
    for variable in ("BACCARAT_LOG_DIR", "BACCARAT_CACHE_DIR"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert spark_log_folder() == tmp_path / "state" / "baccarat" / "logs"
    assert cache_folder() == tmp_path / "cache" / "baccarat"
    monkeypatch.setenv("XDG_STATE_HOME", "")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert spark_log_folder() == tmp_path / "home" / ".local" / "state" / "baccarat" / "logs"
    assert cache_folder() == Path(tmp_path, "home", ".cache", "baccarat")
