"""The settings of a driver that a `baccarat` command launches itself (pipeline/spark.py)."""

from pyspark import SparkConf

from pipeline.spark import QUICK_JVM, launched_conf


def test_executors_compiled_with_c2_and_ran_the_parallel_collector_while_the_tasks_wanted_the_cores():
    conf = launched_conf(SparkConf(loadDefaults=False), "local[2]", "ERROR")
    assert conf.get("spark.executor.defaultJavaOptions") == QUICK_JVM
    assert QUICK_JVM in conf.get("spark.driver.extraJavaOptions")


def test_the_executors_quick_jvm_leaves_the_users_own_executor_options_to_spark_defaults():
    """spark-defaults.conf's spark.executor.extraJavaOptions come after the default, so they win."""
    conf = launched_conf(SparkConf(loadDefaults=False), "local[2]", "ERROR")
    assert conf.get("spark.executor.extraJavaOptions") is None
