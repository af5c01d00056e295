"""Blocks of the documentation that tests run as they stand."""

import re
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]


def superset_recipe() -> str:
    """The shell block of docs/serving.md that installs and runs Superset."""
    document = (REPOSITORY / "docs" / "serving.md").read_text()
    return next(block for block in re.findall(r"```bash\n(.*?)```", document, re.DOTALL) if "apache-superset" in block)
