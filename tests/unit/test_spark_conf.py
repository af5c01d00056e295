"""The settings of a driver that a `baccarat` command launches itself (pipeline/spark.py)."""

from pyspark import SparkConf

from pipeline.spark import QUICK_JVM, executor_settings, launched_conf
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
