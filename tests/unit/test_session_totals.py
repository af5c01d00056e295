"""The backtest's running cents totals (wagered, net, a bankroll; a session's and the marts' sums over
sessions) were never checked against int64 cents or decimal(18,2). Money amounts are capped at 10**12,
but a run may hold 10**12 rounds: a table maximum of 10**12 over a long enough run could pass both, the
compiled loop's int64 wrapping silently. pipeline/backtest/job.py bounds every total from the table
maximum, the largest payout and the run's rounds, and refuses in one line a system that could pass."""

from decimal import Decimal

import pyarrow as pa
import pytest

from pipeline.backtest.job import LARGEST_CENTS, MONEY_TYPE, check_totals_fit, largest_total_cents
from pipeline.cards import MAX_DECKS
from pipeline.errors import BaccaratError
from pipeline.rule_sets import load_rule_set
from pipeline.simulate.limits import MAX_SHOES
from pipeline.systems import MAX_MONEY, load_system

ROUNDS_PER_SHOE = MAX_DECKS * 52 // 4  # a round deals at least four cards
LARGEST_RUN = MAX_SHOES * ROUNDS_PER_SHOE


def huge_table(name: str):
    system = load_system(name)
    return system.model_copy(update={"table": system.table.model_copy(update={"maximum": MAX_MONEY})})


def test_largest_cents_is_decimal_18_2_and_inside_int64():
    assert Decimal(LARGEST_CENTS).scaleb(-2) == pa.scalar(Decimal("9999999999999999.99"), MONEY_TYPE).as_py()
    assert LARGEST_CENTS < 2**63 - 1


def test_running_cents_totals_were_unchecked_a_huge_table_over_a_small_run_is_refused():
    """20 shoes' rounds at a table maximum of 10**12 on the tie (8 to 1) could total 1.3e18 cents."""
    with pytest.raises(BaccaratError, match=r"system 'flat_tie': a table maximum of 1000000000000 over the run's "
                                            r"1,600 rounds could take its totals past decimal128\(18, 2\)"):
        check_totals_fit(huge_table("flat_tie"), load_rule_set("punto_banco"), 1_600)
    check_totals_fit(huge_table("flat_tie"), load_rule_set("punto_banco"), 1_000)


def test_shipped_banker_and_player_systems_fit_the_largest_run():
    """The bound at the caps: a shipped table (at most 5,120) over MAX_SHOES eight-deck shoes fits
    decimal(18,2); raising MAX_SHOES or a shipped table maximum tenfold would not."""
    rule_set = load_rule_set("punto_banco")
    for name in ("flat_banker", "martingale_banker", "martingale_player_512", "labouchere_banker"):
        assert largest_total_cents(load_system(name), rule_set, LARGEST_RUN) <= LARGEST_CENTS
        assert largest_total_cents(load_system(name), rule_set, 10 * LARGEST_RUN) > LARGEST_CENTS
