"""Fixtures of both tiers (nothing here starts a JVM); Spark, S3 and the servers are in
tests/functional/conftest.py. tests/reference.py is the plain-Python checker both tiers use."""

import os
import platform
import shutil
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest
import yaml
from caches import cache_folder

from pipeline.config_files import resource

# numba's compiled kernels (pipeline/session_kernel.py caches them), for the tests' processes and the Spark
# workers they start, go to the tests' cache folder rather than beside the sources
os.environ.setdefault("NUMBA_CACHE_DIR", str(cache_folder() / "numba"))
# So does Python's bytecode of the package and the tests, written even where PYTHONDONTWRITEBYTECODE is set
# (there every worker, CLI process and Spark Python worker of the suite compiled every module it imported,
# and pytest rewrote every test module's asserts again in each worker)
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
os.environ.setdefault("PYTHONPYCACHEPREFIX", str(cache_folder() / "pycache"))
sys.dont_write_bytecode, sys.pycache_prefix = False, os.environ["PYTHONPYCACHEPREFIX"]

REPORTED_PACKAGES = ("pyspark", "duckdb", "polars", "deltalake", "pyarrow")


def _installed(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


def _java_version() -> str:
    java = shutil.which("java")
    if java is None:
        return "not on the PATH"
    done = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    return (done.stderr or done.stdout).splitlines()[0] if done.returncode == 0 else f"{java} fails"


def pytest_report_header(config):
    packages = ", ".join(f"{name} {_installed(name)}" for name in REPORTED_PACKAGES)
    return [f"baccarat: Python {platform.python_version()}, {packages}", f"java: {_java_version()}"]


def shared_cache(tmp_path_factory) -> Path:
    """The session's cache folder, one for every xdist worker (in the run's own tmp folder, which holds
    each worker's): the first `baccarat` of any worker makes the driver's archive (17 s of CPU), and the
    others map it (two makings at once each keep a whole file)."""
    base = tmp_path_factory.getbasetemp()
    cache = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "cache"
    cache.mkdir(exist_ok=True)
    return cache


@pytest.fixture(scope="session", autouse=True)
def spark_logs(tmp_path_factory):
    """Spark's log files, of the suite's session and of every `baccarat` it starts, in a folder of the
    suite's (never the user's ~/.local/state); so is the driver's class-data archive (never ~/.cache),
    which the first `baccarat` process that starts Spark makes and the later ones map."""
    folder = tmp_path_factory.mktemp("spark-logs")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BACCARAT_LOG_DIR", str(folder))
        patch.setenv("BACCARAT_CACHE_DIR", str(shared_cache(tmp_path_factory)))
        patch.delenv("BACCARAT_SPARK_LOG_LEVEL", raising=False)
        yield folder


@pytest.fixture
def cli(capsys):
    """Run `baccarat ARGS...` in process; returns (exit status, stdout, stderr without the jobs' progress lines)."""
    from cli_process import without_progress
    from pipeline.cli import main

    def run(*args: str):
        status = main([str(arg) for arg in args])
        captured = capsys.readouterr()
        return status, captured.out, without_progress(captured.err)

    return run


@pytest.fixture
def rules_file(tmp_path):
    """Write a variant of a shipped rule set to tmp_path; `changes` are merged in, None deletes a key."""

    def write(changes: dict, base: str = "punto_banco"):
        document = yaml.safe_load(resource("conf", "rules", f"{base}.yaml").read_text())
        for key, value in changes.items():
            if value is None:
                document.pop(key)
            else:
                document[key] = value
        path = tmp_path / "rules.yaml"
        path.write_text(yaml.safe_dump(document))
        return path

    return write
