"""`baccarat vacuum --retention-hours` with a huge number ended in deltalake's OverflowError or panic, a
traceback with exit 1: a retention past the bound is bad input, refused in one line before any table is read."""

import pytest


@pytest.mark.parametrize("hours", ["1000001", "10000000000000", "100000000000000000000"])
def test_a_huge_vacuum_retention_was_a_traceback(cli, tmp_path, hours):
    status, out, err = cli("vacuum", "--out", tmp_path, "--retention-hours", hours)
    assert (status, out) == (2, "") and err.count("\n") == 1
    assert "Invalid value for '--retention-hours'" in err and "is over 1,000,000 hours" in err
    assert list(tmp_path.iterdir()) == []
