"""Starting Spark's JVM (pipeline/spark.py), in a process of its own: nothing of it outlives an interrupt."""

import os
import signal
import subprocess
import sys
import time

# A real SIGINT, sent the moment pyspark has started the JVM and before it has connected to it.
INTERRUPT_AS_THE_JVM_STARTS = """
import os, signal, subprocess, sys
import pyspark.java_gateway

class InterruptOnStart(subprocess.Popen):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        print(self.pid, flush=True)
        os.kill(os.getpid(), signal.SIGINT)

pyspark.java_gateway.Popen = InterruptOnStart
from pipeline.spark import spark_context
try:
    spark_context("local[1]", "interrupted-as-it-starts")
except KeyboardInterrupt:
    sys.exit(130)
"""


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_orphan_jvm_after_ctrl_c_during_spark_start_up(tmp_path):
    done = subprocess.run([sys.executable, "-c", INTERRUPT_AS_THE_JVM_STARTS], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "BACCARAT_LOG_DIR": str(tmp_path)})
    jvm = int(done.stdout.split()[0])
    try:
        deadline = time.monotonic() + 30
        while alive(jvm) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert done.returncode == 130, done.stderr
        assert not alive(jvm), "the JVM outlived the interrupted process"
    finally:
        if alive(jvm):
            os.kill(jvm, signal.SIGKILL)
