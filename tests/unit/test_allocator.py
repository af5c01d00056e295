"""Polars' allocator keeps the pages its queries free once the CLI has started (pipeline/allocator.py):
a query run again a second and a half after the same query twice faults no new pages in; and where the
kernel gives huge pages on request, the first query faults in 2 MB pages."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from pyspark import SparkConf

from pipeline.allocator import POLARS_ALLOCATOR_SETTINGS, POLARS_ALLOCATOR_VARIABLE
from pipeline.spark import executor_settings

# Prints the minor page faults of a query over 20M integers, then of the same query 1.5 s after it ran
# twice (Polars' own setting hands freed pages back within a second).
TWO_QUERIES = """
import resource, sys, time
if sys.argv[1] == "kept":
    from pipeline.cli.app import main
    main(["--help"])
import polars as pl

def page_faults():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    frame = pl.DataFrame({"a": pl.int_range(0, 20_000_000, eager=True)})
    frame.select(pl.col("a") * 2).sum()
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

first = page_faults()
page_faults()
time.sleep(1.5)
print(first, page_faults())
"""


def _page_faults(arm: str) -> tuple[int, int]:
    environment = {name: value for name, value in os.environ.items() if name != POLARS_ALLOCATOR_VARIABLE}
    done = subprocess.run([sys.executable, "-c", TWO_QUERIES, arm], env=environment, capture_output=True,
                          text=True, check=True)
    first, second = done.stdout.split()[-2:]
    return int(first), int(second)


def kernel_huge_pages() -> str:
    """When the kernel gives a process transparent huge pages: always, madvise (when it asks) or never."""
    modes = Path("/sys/kernel/mm/transparent_hugepage/enabled")
    return re.search(r"\[(\w+)\]", modes.read_text()).group(1) if modes.exists() else "never"


@pytest.mark.parametrize("arm", ["kept", "handed back"])
def test_polars_keeps_the_pages_it_frees_in_a_process_the_cli_started(arm):
    first, second = _page_faults(arm)
    huge = kernel_huge_pages() == "always" or (arm == "kept" and kernel_huge_pages() == "madvise")
    if huge:  # 80 pages of 2 MB, not 40,000 of 4 KB
        assert first < 4_000
    else:
        assert first > 10_000  # 160 MB of integers
    if arm == "kept":
        assert second < first / 10
    elif not huge:  # without the CLI's setting, Polars faults its pages in again: the check above can fail
        assert second > first / 2


def test_spark_executors_keep_them_too_unless_their_spark_conf_says_otherwise(monkeypatch):
    """Whatever this process's variable holds: once Polars is imported, it holds Polars' own settings."""
    executors = f"spark.executorEnv.{POLARS_ALLOCATOR_VARIABLE}"
    monkeypatch.setenv(POLARS_ALLOCATOR_VARIABLE, "dirty_decay_ms:500,muzzy_decay_ms:1000")
    assert executor_settings(SparkConf(loadDefaults=False)).get(executors) == POLARS_ALLOCATOR_SETTINGS
    own = SparkConf(loadDefaults=False).set(executors, "narenas:1")
    assert executor_settings(own).get(executors) == "narenas:1"
