"""The cores a process may use: what its CPU affinity leaves it, not the host's count. Each check runs in
a child process pinned to one CPU (os.sched_setaffinity), as taskset or a container's cpuset pins it."""

import subprocess
import sys
import textwrap

PINNED = "import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})\n"


def pinned_to_one_cpu(code: str) -> str:
    """What `code` prints in a child process pinned to one CPU."""
    result = subprocess.run([sys.executable, "-c", PINNED + textwrap.dedent(code)], capture_output=True,
                            text=True, timeout=60, check=True)
    return result.stdout.strip()


def test_a_process_pinned_to_one_cpu_may_use_one_core():
    assert pinned_to_one_cpu("from pipeline.cores import usable_cores; print(usable_cores())") == "1"


def test_a_pinned_process_builds_one_range_at_a_time():
    """on_every_core runs as many ranges at once as the process may use cores (os.cpu_count() said 2)."""
    assert pinned_to_one_cpu("""
        import threading, time
        from pipeline.marts.partials import ShoeRange, on_every_core
        running, most = set(), []
        lock = threading.Lock()
        def task(shoes):
            with lock:
                running.add(shoes.first)
                most.append(len(running))
            time.sleep(0.05)
            with lock:
                running.discard(shoes.first)
        on_every_core(task, [ShoeRange(first, first + 1, (), ()) for first in range(4)])
        print(max(most))
    """) == "1"


def test_duckdb_connections_of_a_pinned_process_run_one_thread(tmp_path):
    """DuckDB sizes its pool from the host's CPUs, whatever the affinity: the store's connections say."""
    assert pinned_to_one_cpu(f"""
        from pipeline.storage import Store
        con = Store.parse({str(tmp_path)!r}).duckdb_connection()
        print(con.execute("SELECT current_setting('threads')").fetchone()[0])
    """) == "1"


def test_the_bi_dialect_and_its_bounds_need_no_loky():
    """BI tools install this package without its dependencies (docs/serving.md): the duckdb+baccarat
    dialect and its query bounds import and work with DuckDB and duckdb-engine alone."""
    code = """
import sys
sys.modules["loky"] = None  # an import of loky fails, as in a venv without it
from pipeline.marts.bi import WarehouseDialect
from pipeline.marts.bounds import Bounds
print(Bounds().threads >= 1)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "True", done.stderr[-2000:]
