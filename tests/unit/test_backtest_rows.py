"""The sessions table's money columns, built from the kernel's cents without a Decimal per value, and
the rounds' nets read as hundredths without Arrow's decimal arithmetic."""

from decimal import Decimal

import numpy as np
import pyarrow as pa

from pipeline.backtest.job import _money
from pipeline.backtest.rounds import _hundredths


def test_money_is_the_cents_exactly_negative_and_large_with_nulls_where_not_valid():
    cents = np.array([-1, 12_345, -250, 0, 10**15 + 7, -(10**15)], dtype=np.int64)
    assert _money(cents).to_pylist() == [Decimal(int(c)).scaleb(-2) for c in cents]
    valid = np.array([True, False, True, False, True, True])
    assert _money(cents, valid).to_pylist() == [Decimal("-0.01"), None, Decimal("-2.50"), None,
                                                Decimal("10000000000000.07"), Decimal("-10000000000000.00")]


def test_nets_are_their_hundredths_exactly_negative_in_chunks_and_sliced():
    nets = [Decimal(text) for text in ("0.95", "-1", "0", "8", "-0.05", "1234567.89", "-1234567.89", "1.5")]
    chunked = pa.chunked_array([pa.array(nets[:3], pa.decimal128(9, 2)), pa.array(nets[3:], pa.decimal128(9, 2))])
    assert _hundredths(chunked).tolist() == [int(net * 100) for net in nets]
    sliced = chunked.slice(2, 4)  # an array's offset into its buffer
    assert _hundredths(sliced).tolist() == [int(net * 100) for net in nets[2:6]]
