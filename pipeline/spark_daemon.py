"""The Python daemon Spark's executors fork their Python workers from (spark.python.daemon.module): pyspark's
own, run with the installed pyspark and py4j ahead of the zipped copies Spark puts first on the workers'
PYTHONPATH (SPARK_HOME/python/lib). Python keeps no compiled bytecode for a zip, so every daemon compiled
pyspark afresh: 0.7 s of boot, paid by the first task of every executor, against 0.28 s
(docs/measurements.md). Where no pyspark is installed, the zips still serve. Nothing else is imported here:
the daemon must start no thread before it forks."""

import sys
from pathlib import PurePath


def _spark_zip(entry: str) -> bool:
    name = PurePath(entry).name
    return name == "pyspark.zip" or (name.startswith("py4j-") and name.endswith("-src.zip"))


def installed_first(path: list[str]) -> list[str]:
    """`path` with Spark's zipped pyspark and py4j moved to its end."""
    return [entry for entry in path if not _spark_zip(entry)] + [entry for entry in path if _spark_zip(entry)]


if __name__ == "__main__":
    sys.path[:] = installed_first(sys.path)
    from pyspark.daemon import manager

    manager()
