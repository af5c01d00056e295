"""The library's floors, declared below as data (1: vocabulary and contracts, up to 10: the spark-submit
entry points): every module imports only modules on its own floor or below, so data walks one way, and
no imports go round in a circle. Read from the source with `ast`: no module is imported, no JVM started."""

import ast
import graphlib
from pathlib import Path

import pytest

# A module's floor is the floor of the longest name here that is it or a package holding it.
FLOORS = {
    "pipeline": 1, "pipeline.cards": 1, "pipeline.schemas": 1, "pipeline.config_files": 1,
    "pipeline.errors": 1, "pipeline.progress": 1, "pipeline.processes": 1, "pipeline.lattice": 1, "pipeline.user_files": 1,
    "pipeline.storage": 2, "pipeline.duckdb_files": 2, "pipeline.render": 1, "pipeline.atomic": 1, "pipeline.at_once": 1, "pipeline.rules": 2, "pipeline.bets": 2,
    "pipeline.rule_sets": 3, "pipeline.spark": 3, "pipeline.systems": 3,
    "pipeline.tasks": 4, "pipeline.runs": 4, "pipeline.orphans": 4, "pipeline.repair": 4, "pipeline.jobs": 4,
    "pipeline.exact": 5, "pipeline.games": 5, "pipeline.risk": 5, "pipeline.play": 5, "pipeline.session_kernel": 5,
    "pipeline.simulate": 6, "pipeline.composition": 6, "pipeline.backtest": 6,
    "pipeline.marts": 7,
    "pipeline.report": 8, "pipeline.dictionary": 8,  # documents: the dashboard, the data dictionary,
    "pipeline.doc_check": 8,  # and the check of every document
    "pipeline.cli": 9, "pipeline.console": 9,
    "jobs": 10,
}
ROOT = next(folder for folder in Path(__file__).resolve().parents if (folder / "pipeline" / "__init__.py").is_file())


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_modules() -> dict[str, Path]:
    paths = [*(ROOT / "pipeline").rglob("*.py"), *(ROOT / "jobs").glob("*.py")]
    return {module_name(path): path for path in paths}


def floor_of(module: str) -> int | None:
    for name in sorted(FLOORS, key=len, reverse=True):
        if module == name or module.startswith(name + "."):
            return FLOORS[name]
    return None


def imported_modules(path: Path, modules: dict[str, Path]) -> set[str]:
    """The project's modules that `path` imports anywhere in it (in a function too): `from a.b import c`
    counts as a.b.c when that is a module, else as a.b."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in modules else node.module
                      for alias in node.names}
    return {name for name in found if name in modules}


def import_graph() -> dict[str, set[str]]:
    modules = project_modules()
    return {name: imported_modules(path, modules) - {name} for name, path in modules.items()}


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    return sorted(f"{module} (floor {floor_of(module)}) -> {imported} (floor {floor_of(imported)})"
                  for module, imports in graph.items() for imported in imports
                  if floor_of(imported) > floor_of(module))


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as error:
        return error.args[1]
    return None


def test_every_module_has_a_floor():
    assert [name for name in project_modules() if floor_of(name) is None] == []


def test_no_module_imports_a_module_on_a_higher_floor():
    assert upward_imports(import_graph()) == []


def test_no_imports_go_round_in_a_circle():
    assert cycle(import_graph()) is None


def test_the_check_sees_an_upward_import_and_a_circle():
    graph = import_graph()
    assert "pipeline.marts.publish" in graph and "pipeline.cli" in graph
    graph["pipeline.marts.publish"].add("pipeline.cli")
    assert upward_imports(graph) == ["pipeline.marts.publish (floor 7) -> pipeline.cli (floor 9)"]
    graph["pipeline.marts.publish"].discard("pipeline.cli")
    graph["pipeline.cards"].add("pipeline.schemas")
    graph["pipeline.schemas"].add("pipeline.cards")
    assert set(cycle(graph)) == {"pipeline.cards", "pipeline.schemas"}


@pytest.mark.parametrize(("source", "expected"), [
    ("from pipeline.marts import board", {"pipeline.marts.board"}),
    ("from pipeline.marts.publish import read_shoe_rounds", {"pipeline.marts.publish"}),
    ("from pipeline import __version__", {"pipeline"}),
    ("import pipeline.cli", {"pipeline.cli"}),
    ("def late():\n    from pipeline.report import build_report", {"pipeline.report"}),
    ("import numpy", set()),
])
def test_imports_are_read_as_modules(tmp_path, source, expected):
    path = tmp_path / "module.py"
    path.write_text(source)
    assert imported_modules(path, project_modules()) == expected
