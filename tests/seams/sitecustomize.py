"""Test-only faults, for every Python process started with this folder first on PYTHONPATH: the driver
and Spark's Python workers import it at start-up (site imports `sitecustomize`). BACCARAT_TEST_FAULT
names the fault; it wraps pipeline.jobs.run_task, the task function of every job. Nothing in the
pipeline reads the variable or imports this module.

- first-attempt: the first attempt of every task fails mid-write, after its first batch, so that a test
  sees Spark retry each task.
- first-task-fails: the task of the first range fails mid-write as on a full disk (an OSError), after its
  first batch and a few seconds;
  every other task, after its first batch, waits, so that it is still writing when Spark ends the job.
- marts-first-attempt: the first attempt of every task of `baccarat marts --master` (a shoe range's
  partials, pipeline/marts/cluster.py) fails before it reads anything.
- marts-gated: every task of `baccarat marts --master` marks its start with a file
  started-<first shoe>-<attempt> in the folder BACCARAT_TEST_GATE names, then waits for a file `open`
  there before it reads anything.
- grown-object: once its task has recorded what it wrote, each task's first object is stored again in an
  upload's chunk encoding (the size prefix, the bytes, the last chunk), a few bytes longer than recorded.
"""

import errno
import functools
import os
import time
from pathlib import Path

FAULT = os.environ.get("BACCARAT_TEST_FAULT")


def failing_first_attempt(task):
    def run(plan, settings, first, last, report_batch):
        from pyspark import TaskContext

        def report(shoes, rows):
            report_batch(shoes, rows)
            if TaskContext.get().attemptNumber() == 0:
                raise RuntimeError(f"injected fault: first attempt of the task for shoes {first}-{last - 1}")

        return task(plan, settings, first, last, report)

    return run


def failing_first_task(task):
    def run(plan, settings, first, last, report_batch):
        def report(shoes, rows):
            report_batch(shoes, rows)
            if first == 0:
                time.sleep(3)  # the other tasks have written a batch each meanwhile
                raise OSError(errno.ENOSPC, f"injected fault: no space left for the task for shoes {first}-{last - 1}")
            time.sleep(120)

        return task(plan, settings, first, last, report)

    return run


def growing_objects(task):
    def run(plan, settings, first, last, report_batch):
        result = task(plan, settings, first, last, report_batch)
        path = plan.out.fs_path(result["files"][0]["path"])
        with plan.out.filesystem.open_input_stream(path) as stream:
            data = stream.read()
        with plan.out.filesystem.open_output_stream(path) as stream:
            stream.write(f"{len(data):x}\r\n".encode() + data + b"\r\n0\r\n\r\n")
        return result

    return run


def _first_attempt_fails(task, shoes):
    from pyspark import TaskContext

    if TaskContext.get().attemptNumber() == 0:
        raise RuntimeError(f"injected fault: first attempt of the marts task for shoes {shoes.first}-{shoes.last - 1}")
    return task(shoes)


def _gated(task, shoes):
    from pyspark import TaskContext

    gate = Path(os.environ["BACCARAT_TEST_GATE"])
    (gate / f"started-{shoes.first}-{TaskContext.get().attemptNumber()}").touch()
    while not (gate / "open").exists():
        time.sleep(0.2)
    return task(shoes)


def wrapped_marts_tasks(spark_ranges, wrapper):
    def ranges_of(context, out):
        run_ranges = spark_ranges(context, out)
        return lambda task, ranges: run_ranges(functools.partial(wrapper, task), ranges)

    return ranges_of


MARTS_FAULTS = {"marts-first-attempt": _first_attempt_fails, "marts-gated": _gated}

if FAULT in MARTS_FAULTS:
    from pipeline.marts import cluster

    cluster.spark_ranges = wrapped_marts_tasks(cluster.spark_ranges, MARTS_FAULTS[FAULT])
elif FAULT:
    from pipeline import jobs

    jobs.run_task = {"first-attempt": failing_first_attempt, "first-task-fails": failing_first_task,
                     "grown-object": growing_objects}[FAULT](jobs.run_task)
