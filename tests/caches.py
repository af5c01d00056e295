"""The folder where the tests keep what outlives a run: the server tests' venvs
(tests/functional/venv_cache.py), numba's compiled kernels and Python's bytecode (tests/conftest.py)."""

import os
from pathlib import Path


def cache_folder() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache", "baccarat-tests")
