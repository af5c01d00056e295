"""The report's Betting systems section (pipeline/report/systems.py) on the marts of hand-made sessions:
what each chart and the edge table show, and that the section is absent without system marts."""

import polars as pl
import pytest

from pipeline.report.systems import edge_table, fan_chart, outcome_chart, systems_section
from test_system_mart_queries import both_engines, session, table, terms


@pytest.fixture(scope="module")
def marts() -> dict[str, pl.DataFrame]:
    """Two systems: 'a' with 20 goal or ruin sessions whose bankrolls are 1..20, 'b' with three."""
    rows = [session("a", "goal" if value > 5 else "ruin", net="-10", wagered="40", banker="40", after=str(value))
            for value in range(1, 21)]
    rows += [session("b", "max_rounds", net=net, wagered="30", player="30") for net in ("-30", "30", "10")]
    return both_engines(table(rows), terms({"a": "10", "b": "10"}, {"a": "banker", "b": "player"}))


def test_fan_chart_draws_the_bands_and_the_median_of_one_system_at_a_time(marts):
    paths = marts["bankroll_paths"]
    fig = fan_chart(paths)
    assert len(fig.data) == 5 * 2 and fig.layout.xaxis.type == "log"
    assert list(fig.layout.xaxis.tickvals) == [10, 25, 50, 100, 250, 500, 1000]
    shown = [trace for trace in fig.data if trace.visible]
    first = paths.filter(pl.col("system") == "a")
    for trace, column in zip(shown, ("p05", "p95", "p25", "p75", "p50"), strict=True):
        assert list(trace.y) == [float(v) for v in first[column]]
        assert list(trace.x) == first["after_rounds"].to_list()
    assert shown[1].fill == shown[3].fill == "tonexty" and shown[4].name == "median"
    assert [b.label for b in fig.layout.updatemenus[0].buttons] == ["A", "B"]


def test_outcome_chart_shows_each_ending_share_with_its_wilson_interval(marts):
    outcomes = marts["system_outcomes"]
    fig = outcome_chart(outcomes)
    assert [trace.name for trace in fig.data] == ["goal", "ruin", "stop loss", "max rounds", "shoe end"]
    goal = outcomes.filter(pl.col("ending") == "goal")
    assert list(fig.data[0].x) == ["a", "b"] and list(fig.data[0].y) == goal["share"].to_list() == [0.75, 0.0]
    assert list(fig.data[0].error_y.array) == pytest.approx((goal["share_high"] - goal["share"]).to_list())
    assert list(fig.data[0].error_y.arrayminus) == pytest.approx((goal["share"] - goal["share_low"]).to_list())


def test_edge_table_flags_an_interval_that_misses_the_exact_edge(marts):
    edge = marts["system_edge"]
    assert edge["edge_in_interval"].to_list() == [False, True]  # 'a' lost 25 % of every stake, every time
    html = edge_table(edge)
    assert html.count("<tr>") == 3 and '<td class="flag">no</td>' in html and "<td>yes</td>" in html
    assert "<td>−25.000\u00a0%</td>" in html


def test_the_section_is_there_with_system_marts_only(marts):
    section = systems_section(marts)
    assert section.count('id="systems"') == 1 and section.count('data-chart="') == 2
    assert systems_section({}) == ""
    assert systems_section({name: frame.clear() for name, frame in marts.items()}) == ""
