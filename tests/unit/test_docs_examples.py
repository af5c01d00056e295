"""Every console example marked runnable in README.md and docs/*.md runs, and prints what it shows
(the marker and the comparison: docs/testing.md, "Runnable examples")."""

import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARKER = re.compile(r"^<!-- runnable(: shape)? -->$")
BORDERS = re.compile(r"[\u2500-\u2570\u2574-\u257f]")  # box drawing, but the roads' marks ╱ ╲
NUMBER = re.compile(r"[-+]?\d[\d,]*(\.\d+)?(e[-+]?\d+)?")
GAP = "..."
# An error bound as lattice.Certified prints it: its last digits follow the machine's floating-point LU
# (OpenBLAS's kernels), while the bound it proves and the value beside it do not.
ERROR_BOUND = re.compile(r"(?<![\d.])\d\.\de-\d\d\b")


def examples():
    """(document:line, shape only, [(command line, expected lines)]) for every runnable block."""
    found = []
    for document in DOCUMENTS:
        lines = document.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines):
            marker = MARKER.match(line)
            if not marker:
                continue
            assert lines[number + 1] == "```console", f"{document.name}:{number + 1}: the marker is not above a console block"
            end = lines.index("```", number + 2)
            found.append(pytest.param(bool(marker.group(1)), commands(lines[number + 2:end]),
                                      id=f"{document.relative_to(ROOT)}:{number + 1}"))
    return found


def commands(block: list[str]) -> list[tuple[str, list[str]]]:
    """The `$ baccarat ...` lines of a block, each with the lines below it."""
    assert block and block[0].startswith("$ "), "a runnable block starts with a `$ ` command line"
    runs: list[tuple[str, list[str]]] = []
    for line in block:
        if line.startswith("$ "):
            runs.append((line[2:], []))
        else:
            runs[-1][1].append(line)
    return runs


def normal(line: str, shape: bool) -> str:
    line = ERROR_BOUND.sub("BOUND", " ".join(BORDERS.sub(" ", line).split()))
    return NUMBER.sub("N", line) if shape else line


def matches(expected: list[str], actual: list[str]) -> bool:
    """Whether the expected lines are the actual ones in order, `...` standing for any lines."""
    if not expected:
        return not actual
    if expected[0] == GAP:
        return any(matches(expected[1:], actual[start:]) for start in range(len(actual) + 1))
    return bool(actual) and expected[0] == actual[0] and matches(expected[1:], actual[1:])


@pytest.mark.parametrize(("shape", "runs"), examples())
def test_a_runnable_example_prints_what_the_document_shows(shape, runs, cli, monkeypatch):
    monkeypatch.chdir(ROOT)  # as a reader runs them, from the repository's root
    for command, shown in runs:
        words = shlex.split(command)
        assert words[0] == "baccarat", f"a runnable example runs baccarat, not {words[0]}"
        status, out, err = cli(*words[1:])
        actual = [normal(line, shape) for line in (out + err).splitlines()]
        expected = [normal(line, shape) for line in shown]
        assert matches([line for line in expected if line], [line for line in actual if line]), (
            f"$ {command}\nthe document shows:\n" + "\n".join(shown) + "\nit printed:\n" + out + err)
        failing = any(line.startswith("error:") for line in shown)
        assert status == (2 if failing else 0), f"$ {command} exited {status}: {err}"


def test_the_exact_figures_and_the_checks_are_runnable_examples():
    run_commands = {shlex.split(command)[1] for example in examples() for command, _ in example.values[1]}
    assert {"odds", "solve", "risk", "roads", "docs"} <= run_commands


def test_the_comparison_tells_a_changed_figure_from_a_redrawn_table():
    table = ["┃ bet ┃ EV ┃", "│ banker │ -0.010579 │"]
    plain = ["bet  EV", "banker  -0.010579"]
    assert matches([normal(line, False) for line in table], [normal(line, False) for line in plain])
    assert not matches([normal(line, False) for line in table], [normal("banker  -0.010580", False)])
    assert matches([normal("│ ruined │ 0.92225 │ 9.9e-26 │", False)], [normal("ruined  0.92225  1.1e-25", False)])
    assert not matches([normal("│ ruined │ 0.92225 │ 9.9e-26 │", False)], [normal("ruined  0.92226  9.9e-26", False)])
    assert matches([normal("4 files in 14.0 s", True)], [normal("4 files in 7.25 s", True)])
    assert not matches([normal("4 files in 14.0 s", True)], [normal("4 rows in 14.0 s", True)])
    assert matches(["a", GAP, "d"], ["a", "b", "c", "d"]) and not matches(["a", "d"], ["a", "b", "d"])
    assert not matches(["a"], ["a", "b"]) and matches(["a", GAP], ["a", "b"])
