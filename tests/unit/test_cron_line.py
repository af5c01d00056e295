"""docs/scheduling.md's cron line ran `cd /srv/baccarat && baccarat run ...`: cron's PATH is /usr/bin:/bin,
where the README's quick start (`pip install -e .` into the clone's .venv) puts no `baccarat`, so every night
logged "/bin/sh: 1: baccarat: not found" (status 127). The line names the venv's program, which the quick
start makes."""

import re
from pathlib import Path

ROOT = Path(__file__).parents[2]


def cron_lines() -> list[str]:
    text = (ROOT / "docs" / "scheduling.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```cron\n(.*?)```", text, re.DOTALL)
    return [line for block in blocks for line in block.splitlines() if line and not line.startswith("#")]


def test_the_cron_line_names_a_baccarat_that_cron_finds_in_a_clone_set_up_as_the_readme_says():
    [line] = cron_lines()
    _, program = re.search(r"\bcd (\S+) && (\S+) ", line).groups()
    assert "/" in program and not program.startswith("/"), program  # the clone's own, relative to `cd`
    venv = program.split("/bin/")[0]
    quick_start = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"python3 -m venv {venv} && . {venv}/bin/activate && pip install -e ." in quick_start
    assert program == f"{venv}/bin/baccarat"
