"""The benchmarks' scratch folder (benchmarks/bench_support.py), and the servers started in it, outlive
no benchmark stopped by SIGTERM: a standalone cluster stopped that way kept running, its three JVMs
orphaned."""

import signal
import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
BENCHMARK = """
import sys, time
sys.path.insert(0, "benchmarks")
from bench_support import scratch_folder
with scratch_folder("bench-test-", False) as folder:
    print(folder, flush=True)
    time.sleep(60)
"""


def test_a_benchmark_stopped_by_sigterm_removes_its_scratch_folder(tmp_path):
    benchmark = subprocess.Popen([sys.executable, "-c", BENCHMARK], cwd=REPOSITORY, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, env={"TMPDIR": str(tmp_path), "PATH": ""})
    folder = Path(benchmark.stdout.readline().strip())
    assert folder.is_dir() and folder.parent == tmp_path
    benchmark.send_signal(signal.SIGTERM)
    assert benchmark.wait(timeout=30) != 0
    assert not folder.exists()
