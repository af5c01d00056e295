"""Plain progress (no terminal: a pipe, a cron log) printed the same line, "0/20,000 shoes, 0 rounds/s,
starting", every five seconds while Spark started: a line is printed only when the shoes dealt changed."""

from pipeline.cli import jobs


def test_plain_progress_repeated_the_same_starting_line_every_five_seconds(capsys, monkeypatch):
    now = [100.0]
    monkeypatch.setattr(jobs.time, "monotonic", lambda: now[0])
    reporter = jobs.Reporter("simulate r", 20, live=False)
    for reported, shoes in enumerate([0, 0, 0, 0, 8, 8, 8, 20, 20]):
        now[0] = 106.0 + 6 * reported
        reporter(shoes, 80 * shoes)
    reporter.close()
    printed = capsys.readouterr()
    assert printed.out == ""
    assert [line.split(",")[0] for line in printed.err.splitlines()] == [
        "simulate r: 0/20 shoes", "simulate r: 8/20 shoes", "simulate r: 20/20 shoes"]


def test_the_backtest_reported_its_sessions_per_second_as_rounds_per_second(capsys, monkeypatch):
    """`baccarat backtest` counts the rows of the sessions table: '200/200 shoes, 1 rounds/s'."""
    now = [100.0]
    monkeypatch.setattr(jobs.time, "monotonic", lambda: now[0])
    reporter = jobs.Reporter("backtest r", 20, live=False, rows="sessions")
    now[0] = 110.0
    reporter(20, 30)
    assert capsys.readouterr().err == "backtest r: 20/20 shoes, 3 sessions/s, about 0 s left\n"
