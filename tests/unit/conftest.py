"""The unit tier never starts a JVM. A tripwire `java` heads the PATH (and JAVA_HOME is unset) in every
unit test, so that Spark started in this process, or by a `baccarat` this tier runs, reaches it
instead of a JVM: it notes the call and fails, and the test that made it fails too."""

import os
import stat
import sys
from pathlib import Path

import pytest

TRIPWIRE = """#!/bin/sh
printf '%s\\n' "$*" >> "{calls}"
echo "the unit tier starts no JVM" >&2
exit 1
"""


class JavaTripwire:
    def __init__(self, folder: Path):
        self.calls = folder / "calls"
        self.calls.touch()
        java = folder / "bin" / "java"
        java.parent.mkdir()
        java.write_text(TRIPWIRE.format(calls=self.calls))
        java.chmod(java.stat().st_mode | stat.S_IXUSR)
        self.bin = java.parent

    def launches(self) -> list[str]:
        """The arguments of every call since the last clear(), one string a call."""
        return self.calls.read_text().splitlines()

    def clear(self) -> None:
        self.calls.write_text("")


@pytest.fixture(scope="session")
def java_tripwire(tmp_path_factory):
    return JavaTripwire(tmp_path_factory.mktemp("no-jvm"))


@pytest.fixture(autouse=True)
def no_jvm(java_tripwire, monkeypatch):
    """Puts the tripwire first on the PATH for one test (so a functional test run after it in the same
    session still finds Java), and fails that test, at teardown, if it tried to start Java."""
    monkeypatch.setenv("PATH", f"{java_tripwire.bin}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.delenv("JAVA_HOME", raising=False)
    if (pyspark := sys.modules.get("pyspark")) is not None:
        # A session that ran functional tests first holds their SparkContext: hidden, so that a unit
        # test reaching for Spark starts one, and trips, instead of borrowing it.
        monkeypatch.setattr(pyspark.SparkContext, "_active_spark_context", None)
    yield
    launches = java_tripwire.launches()
    java_tripwire.clear()
    if launches:
        pytest.fail(f"this unit test started Java ({launches[0]!r}): it belongs in tests/functional")
