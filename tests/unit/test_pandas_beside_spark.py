"""With pandas 3 installed beside the package (as for docs/serving.md's `pandas.read_sql` of the warehouse),
every command that started Spark printed two lines of pyspark's FutureWarning on stderr ("PySpark does not
yet fully support pandas >= 3.0.0", from pyspark.testing.utils, which pyspark's first call into the JVM
imports), where nothing but the command's own lines may reach the terminal. The pipeline hands Spark no
pandas, so the warning is dropped where Spark starts."""

import subprocess
import sys


def test_pyspark_s_warning_on_pandas_3_does_not_reach_stderr(tmp_path):
    pandas = tmp_path / "pandas"  # a pandas 3 as pyspark sees it: its version
    pandas.mkdir()
    (pandas / "__init__.py").write_text('__version__ = "3.0.0"\n')
    # pipeline.spark is imported before any SparkContext starts; the import is the one the first JVM call makes
    script = "import pipeline.spark\nimport pyspark.testing.utils\n"
    ran = subprocess.run([sys.executable, "-c", script], env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
                         capture_output=True, text=True, timeout=120)
    assert (ran.returncode, ran.stderr) == (0, "")
