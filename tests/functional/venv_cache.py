"""Virtual environments that the server tests install (Airflow's, Superset's), kept between runs in the user's cache
folder and named by a hash of what they hold: a second run of the suite, or a fresh clone on a machine
whose cache is warm, installs nothing but this package. One lock file per venv serialises its builder and
its users, so that concurrent test sessions neither build it twice nor swap the package under each other."""

import contextlib
import fcntl
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

from caches import cache_folder

REPOSITORY = Path(__file__).resolve().parents[2]
COMPLETE = "baccarat-venv-complete"  # written last: a venv without it was interrupted while it was built
# byte-compiled once when built, so that no process started from it compiles its imports again (they would
# not keep them under PYTHONDONTWRITEBYTECODE); part of the venv's name, as its requirements are
BUILD_OPTIONS = ["--compile-bytecode"]


def package_dependencies() -> list[str]:
    """This package's own requirements, from pyproject.toml: a caller puts them in the cached venv's
    requirements when the package is to run there with all of them."""
    with open(REPOSITORY / "pyproject.toml", "rb") as project:
        return tomllib.load(project)["project"]["dependencies"]


def venv_key(requirements: list[str]) -> str:
    described = json.dumps([sys.version, os.path.realpath(sys.executable), platform.machine(), sorted(requirements),
                            BUILD_OPTIONS])
    return hashlib.sha256(described.encode()).hexdigest()[:16]


def create(venv: Path) -> None:
    """A venv with pip in it (Superset's recipe runs its own `pip install` there)."""
    subprocess.run([sys.executable, "-m", "uv", "venv", "-q", "--seed", "--python", sys.executable, str(venv)],
                   check=True, capture_output=True)


def install(python: Path, arguments: list[str], env: dict) -> None:
    """uv, not pip: it fetches and installs in parallel, and so builds Airflow's venv in 33 s where pip
    took 81 s (the same packages, from empty caches; docs/testing.md); the server tests wait on it on a
    fresh machine."""
    done = subprocess.run([sys.executable, "-m", "uv", "pip", "install", "-q", "--python", str(python), *arguments],
                          env=env | {"UV_CACHE_DIR": str(cache_folder() / "uv")}, capture_output=True, text=True,
                          timeout=3600)
    if done.returncode:
        raise RuntimeError(f"uv pip install {' '.join(arguments)} failed:\n{done.stderr[-3000:]}")


def remove_unused(name: str, keep: Path) -> None:
    """The venvs of other hashes whose lock nobody holds: what an older pin left behind."""
    for lock_file in cache_folder().glob(f"{name}-*.lock"):
        venv = lock_file.with_suffix("")
        if venv == keep:
            continue
        with open(lock_file, "w") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue
            shutil.rmtree(venv, ignore_errors=True)
            lock_file.unlink()


@contextlib.contextmanager
def cached_venv(name: str, requirements: list[str], package: Path | None, env: dict) -> Iterator[Path]:
    """A venv holding `requirements` (built once per hash of them), with the package built from `package`
    installed afresh unless it is None; locked for the caller until the block ends."""
    venv = cache_folder() / f"{name}-{venv_key(requirements)}"
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        python = venv / "bin" / "python"
        if not (venv / COMPLETE).exists():
            remove_unused(name, venv)
            shutil.rmtree(venv, ignore_errors=True)
            create(venv)
            install(python, [*BUILD_OPTIONS, *requirements], env)
            (venv / COMPLETE).write_text("\n".join(requirements) + "\n")
        if package is not None:
            install(python, ["--no-deps", "--reinstall", str(package)], env)
        yield venv
