"""The sessions table's money columns, built from the kernel's cents without a Decimal per value."""

from decimal import Decimal

import numpy as np

from pipeline.backtest.job import _money


def test_money_is_the_cents_exactly_negative_and_large_with_nulls_where_not_valid():
    cents = np.array([-1, 12_345, -250, 0, 10**15 + 7, -(10**15)], dtype=np.int64)
    assert _money(cents).to_pylist() == [Decimal(int(c)).scaleb(-2) for c in cents]
    valid = np.array([True, False, True, False, True, True])
    assert _money(cents, valid).to_pylist() == [Decimal("-0.01"), None, Decimal("-2.50"), None,
                                                Decimal("10000000000000.07"), Decimal("-10000000000000.00")]
