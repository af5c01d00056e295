"""The settings of a driver that a `baccarat` command launches itself (pipeline/spark.py)."""

from pathlib import Path

import pytest
from pyspark import SparkConf

from pipeline.spark import QUICK_JVM, executor_settings, launched_conf
from pipeline.spark_archive import DriverArchive
from pipeline.spark_daemon import installed_first


def test_executors_compiled_with_c2_and_ran_the_parallel_collector_while_the_tasks_wanted_the_cores():
    conf = launched_conf(SparkConf(loadDefaults=False), "local[2]", "ERROR")
    assert conf.get("spark.executor.defaultJavaOptions") == QUICK_JVM
    assert QUICK_JVM in conf.get("spark.driver.extraJavaOptions")


def test_the_executors_quick_jvm_leaves_the_users_own_executor_options_to_spark_defaults():
    """spark-defaults.conf's spark.executor.extraJavaOptions come after the default, so they win."""
    conf = launched_conf(SparkConf(loadDefaults=False), "local[2]", "ERROR")
    assert conf.get("spark.executor.extraJavaOptions") is None


def test_the_executors_fork_their_workers_from_the_pipelines_daemon():
    """pipeline/spark_daemon.py: the installed pyspark, not the zip Spark puts first on the workers' path
    (tests/functional/test_marts_cluster.py checks what the workers import)."""
    conf = executor_settings(SparkConf(loadDefaults=False))
    assert conf.get("spark.python.daemon.module") == "pipeline.spark_daemon"
    assert conf.get("spark.executorEnv.POLARS_MAX_THREADS") == "1"


def test_executors_given_the_package_by_py_files_keep_pysparks_daemon():
    """Their workers add the package's zip to the path only when a task starts: a daemon of the package
    could not start, and every task would fail."""
    conf = executor_settings(SparkConf(loadDefaults=False).set("spark.submit.pyFiles", "/jobs/pipeline.zip"))
    assert conf.get("spark.python.daemon.module") is None


def test_the_daemon_puts_sparks_zipped_pyspark_and_py4j_after_the_installed_ones():
    path = ["", "/spark/python/lib/pyspark.zip", "/spark/python/lib/py4j-0.10.9.9-src.zip", "/app",
            "/usr/lib/python3.11/site-packages"]
    assert installed_first(path) == ["", "/app", "/usr/lib/python3.11/site-packages",
                                      "/spark/python/lib/pyspark.zip", "/spark/python/lib/py4j-0.10.9.9-src.zip"]


MAPPED = DriverArchive(Path("/cache/jvm/driver-key.jsa"), None)


@pytest.mark.parametrize("master", ["spark://127.0.0.1:7077", "spark://localhost:7077", "spark://[::1]:7077",
                                    "spark://127.0.0.1:7077,127.0.0.2:7078"])
def test_executors_of_a_master_on_this_host_map_the_archive_the_driver_maps(master):
    """Their JVMs start from the classes the driver's archive holds (about 1.4 s of CPU less each,
    docs/measurements.md)."""
    conf = launched_conf(SparkConf(loadDefaults=False), master, "ERROR", MAPPED)
    assert conf.get("spark.executor.defaultJavaOptions") == f"{QUICK_JVM} {MAPPED.java_options()}"


@pytest.mark.parametrize(("master", "archive"), [
    ("spark://spark-master.example:7077", MAPPED),  # workers elsewhere: no such file there
    ("spark://127.0.0.1:7077,10.0.0.2:7077", MAPPED),
    ("local[2]", MAPPED),  # no executor JVM
    ("spark://127.0.0.1:7077", DriverArchive(Path("/cache/jvm/driver-key.jsa"), Path("/cache/jvm/.making"))),
    ("spark://127.0.0.1:7077", None),
])
def test_executors_elsewhere_or_without_an_archive_made_start_with_the_quick_jvm_alone(master, archive):
    """A JVM given an archive it cannot find starts without sharing any class, Java's own default archive
    included; and an archive being made is not whole until the driver's JVM has exited."""
    conf = launched_conf(SparkConf(loadDefaults=False), master, "ERROR", archive)
    assert conf.get("spark.executor.defaultJavaOptions") == QUICK_JVM
