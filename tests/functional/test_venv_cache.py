"""tests/functional/venv_cache.py, the cache of the server tests' venvs: built once per hash of what it
holds, rebuilt when a build was interrupted, the package installed afresh at every use, an older hash's
venv removed unless someone holds it. Making a venv and uv are replaced by writing down what they were
asked, so that this test runs in a second; test_airflow.py uses the real ones."""

import fcntl

import pytest
import venv_cache

AIRFLOW = ["apache-airflow==3.3.2"]
BUILT = ("--compile-bytecode", *AIRFLOW)  # the requirements, byte-compiled once
PACKAGE = ("--no-deps", "--reinstall", "package")


@pytest.fixture
def calls(tmp_path, monkeypatch) -> list:
    """What the cache asked for, in order: ("create", venv) and ("install", venv, first argument)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    asked = []

    def create(venv):
        (venv / "bin").mkdir(parents=True)
        asked.append(("create", venv.name))

    monkeypatch.setattr(venv_cache, "create", create)
    monkeypatch.setattr(venv_cache, "install", lambda python, arguments, env: asked.append(
        ("install", python.parents[1].name, tuple(arguments))))
    return asked


def use(requirements) -> str:
    with venv_cache.cached_venv("airflow", requirements, "package", {}) as venv:
        return venv.name


def venvs() -> list[str]:
    return sorted(path.name for path in venv_cache.cache_folder().iterdir() if path.is_dir())


def test_a_venv_is_built_once_and_the_package_installed_at_every_use(calls):
    first, second = use(AIRFLOW), use(AIRFLOW)
    assert first == second and first.startswith("airflow-")
    assert calls == [("create", first), ("install", first, BUILT), ("install", first, PACKAGE),
                     ("install", first, PACKAGE)]


def test_other_pins_or_dependencies_name_another_venv(calls):
    pinned = use(AIRFLOW)
    assert use(["apache-airflow==3.3.3"]) != pinned
    assert use([*AIRFLOW, "pyspark==4.0.0"]) != pinned
    assert use(list(reversed([*AIRFLOW, "pyspark==4.0.0"]))) == use([*AIRFLOW, "pyspark==4.0.0"])


def test_without_a_package_only_the_requirements_are_installed(calls):
    with venv_cache.cached_venv("superset", AIRFLOW, None, {}) as venv:
        assert calls == [("create", venv.name), ("install", venv.name, BUILT)]
    with venv_cache.cached_venv("superset", AIRFLOW, None, {}):
        assert len(calls) == 2


def test_a_build_interrupted_is_built_again(calls, monkeypatch):
    recording = venv_cache.install

    def interrupted(*arguments):
        recording(*arguments)
        monkeypatch.setattr(venv_cache, "install", recording)
        raise KeyboardInterrupt

    monkeypatch.setattr(venv_cache, "install", interrupted)
    with pytest.raises(KeyboardInterrupt):
        use(AIRFLOW)
    name = use(AIRFLOW)
    assert calls == [("create", name), ("install", name, BUILT),
                     ("create", name), ("install", name, BUILT), ("install", name, PACKAGE)]


def test_an_older_venv_is_removed_when_a_new_one_is_built_unless_it_is_in_use(calls):
    older = use(["apache-airflow==3.3.0"])
    with open(venv_cache.cache_folder() / f"{older}.lock") as lock:
        fcntl.flock(lock, fcntl.LOCK_SH)
        newer = use(["apache-airflow==3.3.1"])
        assert venvs() == sorted([older, newer])
    newest = use(AIRFLOW)
    assert venvs() == [newest]
    assert sorted(path.name for path in venv_cache.cache_folder().iterdir()) == [newest, f"{newest}.lock"]
