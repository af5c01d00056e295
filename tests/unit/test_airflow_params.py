"""The params of the Airflow DAG (orchestration/airflow/baccarat_daily.py), as Airflow validates a run's params
when it is triggered: with jsonschema, against each Param's schema. Airflow is not installed for this tier
(tests/functional/test_airflow.py runs the DAG in Airflow itself): the DAG file is run against stand-ins for
the few names it imports, which record its params. `rules` accepted banque, which dealt, then failed at the
marts task (the marts and the report read one-hand rounds)."""

import runpy
import sys
import types
from pathlib import Path

import jsonschema
import pytest

from pipeline.rule_sets import fixed_tableau_rule_sets

DAG_FILE = Path(__file__).resolve().parents[2] / "orchestration" / "airflow" / "baccarat_daily.py"


class Param:
    """As Airflow's: the keywords but the description are the value's JSON schema."""

    def __init__(self, default, description: str | None = None, **schema):
        self.default, self.description, self.schema = default, description, schema


class Node:
    """A task or an operator: `>>` chains them."""

    template_fields = ()

    def __init__(self, *arguments, **keywords):
        pass

    def __rshift__(self, other):
        return other


class DAG:
    made = []

    def __init__(self, **keywords):
        self.params = keywords["params"]
        DAG.made.append(self)

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        return False


def _decorator(function):
    return lambda *arguments, **keywords: Node()


def _stand_ins() -> dict[str, types.ModuleType]:
    task = type("Task", (), {"__call__": staticmethod(_decorator), "branch": staticmethod(_decorator),
                             "short_circuit": staticmethod(_decorator)})()
    modules = {name: types.ModuleType(name) for name in (
        "airflow", "airflow.sdk", "airflow.sdk.exceptions", "airflow.providers", "airflow.providers.apache",
        "airflow.providers.apache.spark", "airflow.providers.apache.spark.operators",
        "airflow.providers.apache.spark.operators.spark_submit")}
    modules["airflow.sdk"].__dict__.update(DAG=DAG, Param=Param, Variable=types.SimpleNamespace(), task=task)
    modules["airflow.sdk.exceptions"].__dict__.update(AirflowException=Exception, AirflowFailException=Exception)
    modules["airflow.providers.apache.spark.operators.spark_submit"].SparkSubmitOperator = Node
    return modules


@pytest.fixture(scope="module")
def params() -> dict[str, Param]:
    with pytest.MonkeyPatch.context() as patch:
        for name, module in _stand_ins().items():
            patch.setitem(sys.modules, name, module)
        runpy.run_path(str(DAG_FILE))
    return DAG.made[-1].params


def test_a_trigger_with_banque_is_refused_by_the_rules_param(params):
    with pytest.raises(jsonschema.ValidationError, match="'banque' is not one of"):
        jsonschema.validate("banque", params["rules"].schema)
    assert "Not banque (two hands: the marts and the report read one-hand rounds)" in params["rules"].description


def test_the_rules_param_takes_the_shipped_rule_sets_whose_table_decides_every_draw(params):
    """Chemin de fer is refused too: the DAG gives no strategies, and simulate refused it for want of them."""
    assert params["rules"].schema["enum"] == fixed_tableau_rule_sets()
    for name in fixed_tableau_rule_sets():
        jsonschema.validate(name, params["rules"].schema)
    jsonschema.validate(params["rules"].default, params["rules"].schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate("chemin_de_fer", params["rules"].schema)
