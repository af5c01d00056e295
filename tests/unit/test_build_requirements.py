"""pyproject.toml's build requirements hold up what the file itself uses."""

import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

PYPROJECT = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())


def test_the_license_string_needed_setuptools_77_but_68_was_allowed():
    """`license = "MIT"` is a PEP 639 expression, which setuptools reads from 77.0 on; 68 to 76 refuse the
    file ("`project.license` must be valid exactly by one definition"), as a build without isolation or
    with a pinned setuptools would find."""
    assert isinstance(PYPROJECT["project"]["license"], str)
    setuptools = next(r for r in map(Requirement, PYPROJECT["build-system"]["requires"]) if r.name == "setuptools")
    assert not setuptools.specifier.contains(Version("76.1"))
    assert setuptools.specifier.contains(Version("77.0.0"))
