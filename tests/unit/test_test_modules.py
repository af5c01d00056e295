"""The tiers also run together (`pytest -m "not slow" tests`, docs/testing.md), and pytest imports a test
module by its file name alone (the test folders are not packages): two tiers may not share one."""

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def module_names(tier: str) -> set[str]:
    return {path.name for path in (TESTS / tier).glob("*.py")} - {"conftest.py", "__init__.py"}


def test_no_two_tiers_share_a_module_name():
    assert module_names("unit") & module_names("functional") == set()
