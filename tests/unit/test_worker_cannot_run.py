"""PYSPARK_PYTHON naming a program that cannot be run (a path that does not exist, or a file that is not
executable): `baccarat simulate` printed the Py4JJavaError's traceback and Spark's Java stack (169 lines),
status 1, where a Python without the package is one line naming PYSPARK_PYTHON."""

import pytest

from pipeline.tasks import _failure_message

# the head of what Spark said (Py4JJavaError's text), from `PYSPARK_PYTHON=/nonexistent baccarat simulate ...`
SPARK_SAID = """An error occurred while calling z:org.apache.spark.api.python.PythonRDD.collectAndServe.
: org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 0.0 failed 1 times, most \
recent failure: Lost task 0.0 in stage 0.0 (TID 0) (192.0.2.2 executor driver): java.io.IOException: Cannot run \
program "{program}": error={errno}, {reason}
\tat java.base/java.lang.ProcessBuilder.start(ProcessBuilder.java:1143)
\tat java.base/java.lang.ProcessBuilder.start(ProcessBuilder.java:1073)
"""


@pytest.mark.parametrize(("program", "errno", "reason"), [("/nonexistent", 2, "No such file or directory"),
                                                          ("/etc/passwd", 13, "Permission denied")])
def test_a_python_that_cannot_be_run_is_one_line_naming_pyspark_python(program, errno, reason):
    line = _failure_message(SPARK_SAID.format(program=program, errno=errno, reason=reason))
    assert line == (f"Spark's Python workers could not start (Cannot run program \"{program}\": error={errno}, "
                    f"{reason}): the Python the executors run (PYSPARK_PYTHON) needs this package and its "
                    "dependencies installed")
