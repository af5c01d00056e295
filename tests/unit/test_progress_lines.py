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
