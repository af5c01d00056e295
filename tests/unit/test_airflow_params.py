"""The rule sets the Airflow DAG's `rules` param takes (orchestration/airflow/baccarat_daily.py), read from
the DAG file without Airflow, which this tier does not install: the shipped rule sets whose table decides
every draw. tests/functional/test_airflow.py triggers the DAG with banque in Airflow itself."""

import ast
from pathlib import Path

from pipeline.rule_sets import fixed_tableau_rule_sets

DAG_FILE = Path(__file__).resolve().parents[2] / "orchestration" / "airflow" / "baccarat_daily.py"


def _param_schema(name: str) -> dict:
    """The JSON-schema keywords of the DAG's param `name` (Param(default, **keywords))."""
    tree = ast.parse(DAG_FILE.read_text(encoding="utf-8"))
    [params] = [keyword.value for node in ast.walk(tree) if isinstance(node, ast.Call)
                for keyword in node.keywords if keyword.arg == "params"]
    param = next(value for key, value in zip(params.keys, params.values) if ast.literal_eval(key) == name)
    return {keyword.arg: ast.literal_eval(keyword.value) for keyword in param.keywords
            if keyword.arg != "description"}


def _daily_rules() -> list[str]:
    tree = ast.parse(DAG_FILE.read_text(encoding="utf-8"))
    [value] = [node.value for node in tree.body if isinstance(node, ast.Assign)
               and any(getattr(target, "id", None) == "DAILY_RULES" for target in node.targets)]
    return ast.literal_eval(value)


def test_the_dag_takes_the_shipped_rule_sets_whose_table_decides_every_draw():
    """Not banque (two hands, which the marts and the report do not read) nor chemin de fer (the DAG gives
    no strategies, which simulate needs): a rule set shipped later is added to the DAG by this test."""
    assert _daily_rules() == fixed_tableau_rule_sets()
    assert "punto_banco" in _daily_rules() and "banque" not in _daily_rules()


def test_a_vacuum_weekday_that_is_no_weekday_is_refused_as_the_run_starts():
    """`{"vacuum_weekday": 7}` (or 9, or -1) was taken, and the weekly vacuum then never ran, without a word."""
    schema = _param_schema("vacuum_weekday")
    assert schema["type"] == "integer"
    assert (schema.get("minimum"), schema.get("maximum")) == (0, 6)
