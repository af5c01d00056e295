"""Speed and memory report for `baccarat marts`, the whole command, each engine against one plain DuckDB scan.

    python benchmarks/marts_bench.py [--shoes 1000000] [--out DIR] [--keep]
    python benchmarks/marts_bench.py --s3 [--shoes 100000]
    python benchmarks/marts_bench.py --master 'local[2]' [--shoes 1000000] [--ranges K]

Deals a run with `baccarat simulate` (or reuses the first committed run in --out), then measures in
the same session:
- the reference: one plain DuckDB aggregate scan of the run's rounds files
  (SELECT outcome, count(*), sum(net_banker) ... GROUP BY outcome), best of three, measured again
  just before each engine's command (other work on the machine moves both alike);
- for each engine (duckdb, polars), in a fresh process: the whole command `baccarat marts --out OUT
  --run-id RUN --engine ENGINE --warehouse FILE` with its defaults, wall clock from the process's
  start to its end, split into start-up (interpreter, imports), verification (reading the runs row;
  runs.check_run: the Delta logs, every data file's size and SHA-256, the Parquet contracts; the
  rest: rule sets, strategies), building the marts in memory,
  committing them as Delta tables, publishing the warehouse, the rest, and the process's exit; and
  the peak memory (ru_maxrss).
Target: each engine's whole command within 20x the scan, peak memory under 6 GB.
--s3 deals the run into a bucket of a local S3 server (moto, 127.0.0.1) and reports, for each engine,
the command there against the sum of the same command on a local copy of the run and what pyarrow
alone needs to read the run's rounds and shoes files from the server (best of three): target at most
1.3x. --master runs, for each engine, the command as above and then with
`--master URL` (Spark tasks computing the partials of shoe ranges, pipeline/marts/cluster.py) on the
same run, and reports the ratio of the two (target: at most 1.2x) and the driver's peak memory.
The script is a report: it exits 0 whatever the ratios are.
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.dataset as ds
import pyarrow.fs as pafs
from bench_support import (
    best_of_three,
    machine_load,
    run_record,
    s3_bucket,
    scratch_folder,
    simulate_command,
)

from pipeline.runs import RunRecord, committed_runs
from pipeline.storage import Store

RATIO_TARGET = 20.0
SPARK_RATIO_TARGET = 1.2
S3_RATIO_TARGET = 1.3
MEMORY_TARGET_MB = 6 * 1024
SCAN = "SELECT outcome, count(*), sum(net_banker) FROM read_parquet({files}, hive_partitioning = false) GROUP BY outcome"
# The command as the console script runs it, with a timer around each phase: each library function is
# replaced wherever a pipeline module holds it (the CLI imports them by name).
COMMAND = """
import json, resource, sys, time
first_line = time.time()
begun = time.perf_counter()
from pipeline import cli
from pipeline.marts import engines, inputs, publish
from pipeline import runs
seconds = dict.fromkeys(("verify", "checksums", "build", "commit", "publish"), 0.0)
seconds["imports"] = time.perf_counter() - begun
def timed(module, name, phase):
    original = getattr(module, name)
    def wrapper(*args, **kwargs):
        begun = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            seconds[phase] += time.perf_counter() - begun
    for holder in list(sys.modules.values()):
        if getattr(holder, "__name__", "").startswith("pipeline") and getattr(holder, name, None) is original:
            setattr(holder, name, wrapper)
for module, name, phase in ((inputs, "load_runs", "verify"), (runs, "check_run", "checksums"),
                            (engines, "build_marts", "build"), (publish, "write_marts", "commit"),
                            (publish, "publish_warehouse", "publish")):
    timed(module, name, phase)
begun = time.perf_counter()
status = cli.main(sys.argv[1:])
seconds["command"] = time.perf_counter() - begun
seconds["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(seconds | {"first_line": first_line, "last_line": time.time()}))
sys.exit(status)
"""


def committed_run(out: str, shoes: int) -> str:
    """The first run in `out`, dealt first when there is none."""
    if not committed_runs(Store.parse(out)):
        subprocess.run(simulate_command(shoes, 20261129, out, "bench"), check=True, stdout=subprocess.DEVNULL)
    return committed_runs(Store.parse(out))[0]


def scan_seconds(out: str, record: RunRecord) -> float:
    store = Store.parse(out)
    files = [store.reader_path(f.path) for f in record.files_of("rounds")]
    query = SCAN.format(files="[" + ", ".join(f"'{f}'" for f in files) + "]")
    timings = []
    with store.duckdb_connection() as con:
        for _ in range(3):
            started = time.perf_counter()
            con.execute(query).fetchall()
            timings.append(time.perf_counter() - started)
    return min(timings)


def command_figures(out: str, run_id: str, engine: str, warehouse: Path, spark: list[str] = ()) -> dict:
    """The whole command in a fresh process (with `spark`: --master and --ranges): wall seconds and each phase's."""
    arguments = ["marts", "--out", out, "--run-id", run_id, "--engine", engine, "--warehouse", str(warehouse), *spark]
    started = time.time()
    done = subprocess.run([sys.executable, "-c", COMMAND, *arguments], capture_output=True, text=True)
    ended = time.time()
    if done.returncode != 0:
        sys.exit(f"baccarat marts --engine {engine} failed ({done.returncode}):\n{done.stderr}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    figures["start-up"] = figures["first_line"] - started + figures["imports"]  # the interpreter, then the imports
    figures["exit"] = ended - figures["last_line"]  # the process ending: libraries' threads and memory
    figures["other"] = figures["command"] - sum(figures[p] for p in ("verify", "build", "commit", "publish"))
    figures["verify"] -= figures["checksums"]
    return figures | {"wall": ended - started}


def split(f: dict) -> str:
    return (f"start-up {f['start-up']:.2f} (imports {f['imports']:.2f})   check_run {f['checksums']:.2f}   "
            f"other checks {f['verify']:.2f}   build {f['build']:.2f}   mart commits {f['commit']:.2f}   "
            f"warehouse {f['publish']:.2f}   rest {f['other']:.2f}   exit {f['exit']:.2f}")


def report(out: str, shoes: int, workdir: Path) -> None:
    run_id = committed_run(out, shoes)
    record = run_record(out, run_id)
    print(f"run {run_id} in {out}: {record.shoes:,} shoes, {record.rounds:,} rounds; {machine_load()}")
    for engine in ("duckdb", "polars"):
        scan = scan_seconds(out, record)  # just before the command: the same load
        print(f"plain DuckDB scan: {scan:.3f} s ({record.rounds / scan / 1e6:.0f}M rows/s)")
        figures = command_figures(out, run_id, engine, workdir / f"warehouse-{engine}.duckdb")
        ratio = figures["wall"] / scan
        verdict = "PASS" if ratio <= RATIO_TARGET and figures["peak_mb"] < MEMORY_TARGET_MB else "FAIL"
        print(f"{engine:7s} baccarat marts {figures['wall']:7.2f} s   ratio {ratio:5.1f} (target <= {RATIO_TARGET:.0f}; "
              f"building alone {figures['build'] / scan:.1f})   peak {figures['peak_mb']:,.0f} MB "
              f"(target < {MEMORY_TARGET_MB:,})   {verdict}", flush=True)
        print(f"        seconds: {split(figures)}", flush=True)
    print(machine_load())


def pyarrow_read_seconds(out: str, record: RunRecord) -> float:
    """What pyarrow alone needs to read every column of the run's rounds and shoes files from OUT."""
    store = Store.parse(out)
    paths = [store.fs_path(f.path) for table in ("rounds", "shoes") for f in record.files_of(table)]
    return best_of_three(lambda: ds.dataset(paths, filesystem=store.filesystem, format="parquet").to_table())


def s3_report(out: str, shoes: int, workdir: Path) -> None:
    """Each engine's command on the bucket against the same command on a local copy plus pyarrow's read."""
    run_id = committed_run(out, shoes)
    record = run_record(out, run_id)
    store, local = Store.parse(out), workdir / "local"
    pafs.copy_files(store.fs_path(), str(local), source_filesystem=store.filesystem,
                    destination_filesystem=pafs.LocalFileSystem())
    print(f"run {run_id} in {out}: {record.shoes:,} shoes, {record.rounds:,} rounds; {machine_load()}")
    for engine in ("duckdb", "polars"):
        read = pyarrow_read_seconds(out, record)
        on_disk = command_figures(str(local), run_id, engine, workdir / f"warehouse-{engine}-local.duckdb")
        on_s3 = command_figures(out, run_id, engine, workdir / f"warehouse-{engine}.duckdb")
        ratio = on_s3["wall"] / (on_disk["wall"] + read)
        print(f"{engine:7s} on S3 {on_s3['wall']:7.2f} s (build {on_s3['build']:.2f})   local disk "
              f"{on_disk['wall']:7.2f} s (build {on_disk['build']:.2f})   pyarrow read {read:.2f} s   ratio {ratio:4.2f} "
              f"(target <= {S3_RATIO_TARGET})   {'PASS' if ratio <= S3_RATIO_TARGET else 'FAIL'}", flush=True)
    print(machine_load())


def spark_report(out: str, shoes: int, workdir: Path, spark: list[str]) -> None:
    """Each engine's command in one process, then with `spark` (--master and --ranges), on the same run."""
    run_id = committed_run(out, shoes)
    record = run_record(out, run_id)
    print(f"run {run_id} in {out}: {record.shoes:,} shoes, {record.rounds:,} rounds; {machine_load()}")
    for engine in ("duckdb", "polars"):
        single = command_figures(out, run_id, engine, workdir / f"warehouse-{engine}.duckdb")
        spread = command_figures(out, run_id, engine, workdir / f"warehouse-{engine}.duckdb", spark)
        ratio = spread["wall"] / single["wall"]
        print(f"{engine:7s} one process {single['wall']:7.2f} s (build {single['build']:.2f})   "
              f"{' '.join(spark)} {spread['wall']:7.2f} s (build {spread['build']:.2f})   ratio {ratio:4.2f} "
              f"(target <= {SPARK_RATIO_TARGET})   driver peak {spread['peak_mb']:,.0f} MB "
              f"{'PASS' if ratio <= SPARK_RATIO_TARGET else 'FAIL'}", flush=True)
    print(machine_load())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shoes", type=int, default=1_000_000)
    parser.add_argument("--out", help="a folder holding a committed run to reuse (dealt there when it holds none)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (the dealt run, the warehouses)")
    parser.add_argument("--s3", action="store_true", help="deal the run into a local S3 server; seconds only")
    parser.add_argument("--master", help="also build with Spark tasks on this master, against one process")
    parser.add_argument("--ranges", type=int, help="with --master: the shoe ranges (default: the command's)")
    args = parser.parse_args()
    spark = ["--master", args.master, *(["--ranges", str(args.ranges)] if args.ranges else [])] if args.master else []
    with scratch_folder("marts-bench-", args.keep) as workdir:
        if args.s3:
            with s3_bucket(workdir / "moto.log") as bucket:
                s3_report(f"{bucket}/marts", args.shoes, workdir)
        elif spark:
            spark_report(args.out or str(workdir / "out"), args.shoes, workdir, spark)
        else:
            report(args.out or str(workdir / "out"), args.shoes, workdir)


if __name__ == "__main__":
    main()
