"""`baccarat marts` of a 300,000-shoe run with round_ev rows ran two ranges of 150,000 shoes, each unpivoting
its 12M round_ev rows by bet and count system at once: with Polars more than 24 GB. A run with round_ev
rows is now cut so that no range holds more than ROUND_EV_SHOES_PER_RANGE of the shoes that have them."""

import pytest

from pipeline.marts.cluster import ROUND_EV_SHOES_PER_RANGE, SHOES_PER_RANGE, default_ranges
from pipeline.tasks import shoe_ranges


@pytest.mark.parametrize(("shoes", "round_ev_shoes"), [
    (300_000, 300_000), (1_000_000, 300_000), (40_000, 40_000), (10_001, 10_001), (2_000_000, 2_000_000),
])
def test_no_range_holds_more_than_its_share_of_shoes_with_round_ev_rows(shoes, round_ev_shoes):
    ranges = shoe_ranges(shoes, default_ranges(shoes, 2, round_ev_shoes))
    assert max(min(last, round_ev_shoes) - first for first, last in ranges if first < round_ev_shoes) \
        <= ROUND_EV_SHOES_PER_RANGE


@pytest.mark.parametrize(("shoes", "round_ev_shoes"), [(1_000_000, 0), (1_000_000, 10_000), (20_000, 0)])
def test_a_run_with_few_or_no_round_ev_rows_keeps_its_ranges(shoes, round_ev_shoes):
    assert default_ranges(shoes, 2, round_ev_shoes) == default_ranges(shoes, 2) == max(2, -(-shoes // SHOES_PER_RANGE))
