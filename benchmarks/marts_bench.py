"""Speed and memory report for `baccarat marts`, the whole command, each engine against one plain DuckDB scan.

    python benchmarks/marts_bench.py [--shoes 1000000] [--out DIR] [--keep] [--repeat N]
    python benchmarks/marts_bench.py --composition [--shoes 20000] [--out DIR] [--keep] [--repeat N]
    python benchmarks/marts_bench.py --s3 [--shoes 100000] [--repeat N]
    python benchmarks/marts_bench.py --master 'local[2]' [--shoes 1000000] [--ranges K] [--repeat N]
    python benchmarks/marts_bench.py --master standalone [--shoes 1000000] [--workers 1,2] [--repeat N]

Deals a run with `baccarat simulate` (or reuses the first committed run in --out), then measures in
the same session, after reading every file of the run once (so that no command pays for the disk alone):
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
--composition measures the same on a run with round_ev rows (docs/composition.md's memory table, which
`/usr/bin/time -f %M` measured): it deals the run (`punto_banco`, default 20,000 shoes), runs `baccarat
composition` over every shoe with the shipped count systems (not timed; nothing to do on a run that has
them), then measures each engine's command as above, against the scan. Memory is held to the one
process's target, 6 GB (docs/measurements.md; docs/composition.md states none of the composition marts'
own); no target is stated for their time, so the ratios are reported without a verdict.
--s3 deals the run into a bucket of a local S3 server (moto, 127.0.0.1) and reports, for each engine,
the command there against the sum of the same command on a local copy of the run and what pyarrow
alone needs to read the run's rounds and shoes files from the server (best of three): target at most
1.3x. --master URL runs the single-process DuckDB command, then, for each engine, the command with
`--master URL` (Spark tasks computing the partials of shoe ranges, pipeline/marts/cluster.py) on the
same run, and reports the ratio to the DuckDB command (target: at most 1.2x) and the peak memory of
every process of the command, the driver, the JVM and the Python workers included (target: each under
1.5 GB). --master standalone starts a standalone cluster on 127.0.0.1 (a master and N one-core
workers, as tests/functional/test_cluster.py does, each worker and its executors pinned to a CPU of
its own, as on one-core machines, unless --unpinned) for each N of --workers and each engine, runs
the command there, stops the cluster (a fresh one for every command), and reports the speed-up of 2
workers over 1 (target: at least 1.6x) and the start-up's share of the time (the interpreter, the imports and the SparkContext; the
target holds only where it is under 10 %).
--repeat N measures N rounds, each every command once in turn (with its scan, in one process), and gives
the verdict on the median of the rounds' ratios: on a machine whose load moves from minute to minute,
one round's ratio moved from 1.10 to 1.42 within an hour (docs/measurements.md).
The script is a report: it exits 0 whatever the ratios are.
"""

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.dataset as ds
import pyarrow.fs as pafs
from bench_support import (
    MemoryPoller,
    best_of_three,
    composition_command,
    machine_load,
    memory_lines,
    run_record,
    s3_bucket,
    scratch_folder,
    simulate_command,
    warm_driver_archive,
)
from test_cluster import standalone_cluster  # the tests' standalone cluster (bench_support's sys.path)

from pipeline.composition.job import ROUND_EV
from pipeline.runs import RunRecord, committed_runs
from pipeline.storage import Store

SHOES = 1_000_000
COMPOSITION_SHOES = 20_000  # docs/composition.md's table: 1.63M round_ev rows
RATIO_TARGET = 20.0
SPARK_RATIO_TARGET = 1.2
S3_RATIO_TARGET = 1.3
MEMORY_TARGET_MB = 6 * 1024
SPARK_MEMORY_TARGET_MB = 1.5 * 1024  # every process of `marts --master`
SCALING_TARGET = 1.6  # 2 one-core workers against 1
STARTUP_SHARE_TARGET = 0.10
SCAN = "SELECT outcome, count(*), sum(net_banker) FROM read_parquet({files}, hive_partitioning = false) GROUP BY outcome"
# The command as the console script runs it, with a timer around each phase: each library function is
# replaced wherever a pipeline module holds it (the CLI imports them by name).
COMMAND = """
import json, resource, sys, time
first_line = time.time()
begun = time.perf_counter()
from pipeline.allocator import set_polars_allocator
set_polars_allocator()  # as cli.main does first: the imports below import Polars, which reads it once
from pipeline import cli
from pipeline.marts import engines, inputs, publish
from pipeline import runs, spark
seconds = dict.fromkeys(("verify", "checksums", "spark", "build", "commit", "publish"), 0.0)
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
                            (publish, "publish_warehouse", "publish"), (spark, "spark_context", "spark")):
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


def composed_run(out: str, shoes: int) -> str:
    """committed_run, with round_ev rows of every shoe by the shipped count systems (`baccarat composition`,
    nothing to do when it has them)."""
    run_id = committed_run(out, shoes)
    subprocess.run(composition_command(run_id, out), check=True, stdout=subprocess.DEVNULL)
    return run_id


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


def round_ev_rows(out: str, run_id: str) -> int:
    """The run's committed round_ev rows, by its log."""
    return sum(f["rows"] for f in Store.parse(out).partition_files(ROUND_EV, run_id))


def command_figures(out: str, run_id: str, engine: str, warehouse: Path, spark: list[str] = (),
                    env: dict | None = None) -> dict:
    """The whole command in a fresh process (with `spark`: --master and --ranges; in `env`): wall seconds
    and each phase's, and the peak memory of each of its processes (peaks: pid -> (name, kB))."""
    arguments = ["marts", "--out", out, "--run-id", run_id, "--engine", engine, "--warehouse", str(warehouse), *spark]
    started = time.time()
    process = subprocess.Popen([sys.executable, "-c", COMMAND, *arguments], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=env)
    with MemoryPoller(process.pid) as poller:
        stdout, stderr = process.communicate()
    ended = time.time()
    if process.returncode != 0:
        sys.exit(f"baccarat marts --engine {engine} failed ({process.returncode}):\n{stderr}")
    figures = json.loads(stdout.strip().splitlines()[-1])
    figures["start-up"] = figures["first_line"] - started + figures["imports"]  # the interpreter, then the imports
    figures["exit"] = ended - figures["last_line"]  # the process ending: libraries' threads and memory
    figures["other"] = figures["command"] - sum(figures[p] for p in ("verify", "spark", "build", "commit", "publish"))
    figures["verify"] -= figures["checksums"]
    return figures | {"wall": ended - started, "peaks": poller.peaks}


def split(f: dict) -> str:
    return (f"start-up {f['start-up']:.2f} (imports {f['imports']:.2f})   check_run {f['checksums']:.2f}   "
            f"other checks {f['verify']:.2f}   SparkContext {f['spark']:.2f}   build {f['build']:.2f}   "
            f"mart commits {f['commit']:.2f}   "
            f"warehouse {f['publish']:.2f}   rest {f['other']:.2f}   exit {f['exit']:.2f}")


def read_once(out: str, record: RunRecord) -> None:
    """Every file of the run read once first, so that the first command's checksum pass does not pay
    for the disk alone (it did: 1.71 s against the second's 0.35 s at 1,000,000 shoes)."""
    Store.parse(out).sha256s([entry.path for entry in record.files])


def report(out: str, shoes: int, workdir: Path, repeat: int, composition: bool = False) -> None:
    """Each engine's whole command in one process against the plain scan measured just before it, `repeat`
    times in turn: every round's ratio, and the verdict on their median and on the largest peak. With
    `composition`, on a run with round_ev rows (composed_run), and no verdict on the ratios (no target)."""
    run_id = (composed_run if composition else committed_run)(out, shoes)
    record = run_record(out, run_id)
    with_rows = f", {round_ev_rows(out, run_id):,} round_ev rows" if composition else ""
    print(f"run {run_id} in {out}: {record.shoes:,} shoes, {record.rounds:,} rounds{with_rows}; {machine_load()}")
    read_once(out, record)
    ratios: dict[str, list[float]] = {"duckdb": [], "polars": []}
    largest = dict.fromkeys(ratios, 0.0)
    for _ in range(repeat):
        for engine in ratios:
            scan = scan_seconds(out, record)  # just before the command: the same load
            print(f"plain DuckDB scan: {scan:.3f} s ({record.rounds / scan / 1e6:.0f}M rows/s)")
            figures = command_figures(out, run_id, engine, workdir / f"warehouse-{engine}.duckdb")
            ratios[engine].append(figures["wall"] / scan)
            largest[engine] = max(largest[engine], figures["peak_mb"])
            print(f"{engine:7s} baccarat marts {figures['wall']:7.2f} s   ratio {ratios[engine][-1]:5.1f} "
                  f"(building alone {figures['build'] / scan:.1f})   peak {figures['peak_mb']:,.0f} MB", flush=True)
            print(f"        seconds: {split(figures)}", flush=True)
    for engine, each in ratios.items():
        target = None if composition else RATIO_TARGET
        print(median_line(engine, "one process against one DuckDB scan", each, target))
        print(f"{engine:7s} peak memory of any round {largest[engine]:,.0f} MB (target < {MEMORY_TARGET_MB:,})   "
              f"{'PASS' if largest[engine] < MEMORY_TARGET_MB else 'FAIL'}")
    print(machine_load())


def pyarrow_read_seconds(out: str, record: RunRecord) -> float:
    """What pyarrow alone needs to read every column of the run's rounds and shoes files from OUT."""
    store = Store.parse(out)
    paths = [store.fs_path(f.path) for table in ("rounds", "shoes") for f in record.files_of(table)]
    return best_of_three(lambda: ds.dataset(paths, filesystem=store.filesystem, format="parquet").to_table())


def s3_report(out: str, shoes: int, workdir: Path, repeat: int) -> None:
    """Each engine's command on the bucket against the same command on a local copy plus pyarrow's read,
    `repeat` times in turn: every round's ratio, and their median."""
    run_id = committed_run(out, shoes)
    record = run_record(out, run_id)
    store, local = Store.parse(out), workdir / "local"
    pafs.copy_files(store.fs_path(), str(local), source_filesystem=store.filesystem,
                    destination_filesystem=pafs.LocalFileSystem())
    print(f"run {run_id} in {out}: {record.shoes:,} shoes, {record.rounds:,} rounds; {machine_load()}")
    ratios: dict[str, list[float]] = {"duckdb": [], "polars": []}
    for _ in range(repeat):
        for engine in ratios:
            read = pyarrow_read_seconds(out, record)
            on_disk = command_figures(str(local), run_id, engine, workdir / f"warehouse-{engine}-local.duckdb")
            on_s3 = command_figures(out, run_id, engine, workdir / f"warehouse-{engine}.duckdb")
            ratios[engine].append(on_s3["wall"] / (on_disk["wall"] + read))
            print(f"{engine:7s} on S3 {on_s3['wall']:7.2f} s (build {on_s3['build']:.2f})   local disk "
                  f"{on_disk['wall']:7.2f} s (build {on_disk['build']:.2f})   pyarrow read {read:.2f} s   "
                  f"ratio {ratios[engine][-1]:4.2f}", flush=True)
            print(f"        on S3: {split(on_s3)}\n        local: {split(on_disk)}", flush=True)
    for engine, each in ratios.items():
        print(median_line(engine, "on S3 against local disk + pyarrow's read", each, S3_RATIO_TARGET))
    print(machine_load())


def median_line(engine: str, what: str, ratios: list[float], target: float | None, at_least: bool = False) -> str:
    """The verdict on the median of rounds' ratios (at most `target`, or with `at_least` at least; none
    without a target), with every round's."""
    median = statistics.median(ratios)
    line = (f"{engine:7s} {what}: median ratio {median:4.2f} of {len(ratios)} round(s) "
            f"({', '.join(f'{r:.2f}' for r in ratios)}; ")
    if target is None:
        return line + "no target stated)"
    met = median >= target if at_least else median <= target
    return line + f"target {'>=' if at_least else '<='} {target})   {'PASS' if met else 'FAIL'}"


def spark_report(out: str, shoes: int, workdir: Path, spark: list[str], repeat: int) -> None:
    """The single-process DuckDB command, then each engine's command with `spark` (--master and --ranges),
    on the same run, `repeat` times in turn: every round's ratio and their median, and every process's
    peak memory."""
    run_id = committed_run(out, shoes)
    record = run_record(out, run_id)
    warm_driver_archive(workdir)
    print(f"run {run_id} in {out}: {record.shoes:,} shoes, {record.rounds:,} rounds; {machine_load()}")
    read_once(out, record)
    ratios: dict[str, list[float]] = {"duckdb": [], "polars": []}
    largest = dict.fromkeys(ratios, 0.0)
    for _ in range(repeat):
        single = command_figures(out, run_id, "duckdb", workdir / "warehouse-single.duckdb")
        print(f"duckdb  one process {single['wall']:7.2f} s   peak {single['peak_mb']:,.0f} MB\n"
              f"        seconds: {split(single)}", flush=True)
        for engine in ratios:
            spread = command_figures(out, run_id, engine, workdir / f"warehouse-{engine}.duckdb", spark)
            ratios[engine].append(spread["wall"] / single["wall"])
            peak_mb = max(kb for _, kb in spread["peaks"].values()) / 1024
            largest[engine] = max(largest[engine], peak_mb)
            print(f"{engine:7s} {' '.join(spark)} {spread['wall']:7.2f} s   ratio to one DuckDB process "
                  f"{ratios[engine][-1]:4.2f}   largest process {peak_mb:,.0f} MB\n        seconds: {split(spread)}",
                  flush=True)
            print("\n".join(memory_lines(spread["peaks"])), flush=True)
    for engine, each in ratios.items():
        print(median_line(engine, f"{' '.join(spark)} against one DuckDB process", each, SPARK_RATIO_TARGET))
        print(f"{engine:7s} largest process of any round {largest[engine]:,.0f} MB (target < "
              f"{SPARK_MEMORY_TARGET_MB:,.0f})   {'PASS' if largest[engine] < SPARK_MEMORY_TARGET_MB else 'FAIL'}")
    print(machine_load())


def startup_share(figures: dict) -> float:
    """The share of the wall time before the command can run a task: the interpreter, imports, SparkContext."""
    return (figures["start-up"] + figures["spark"]) / figures["wall"]


def scaling_report(out: str, shoes: int, workdir: Path, workers: list[int], ranges: list[str],
                   pinned: bool, repeat: int) -> None:
    """Each engine's command on a standalone cluster of each size in `workers` (one-core workers on
    127.0.0.1, started and stopped here, each pinned to a CPU of its own unless not `pinned`), `repeat`
    rounds of every size in turn, and the speed-up of 2 workers over 1: every round's, and their median."""
    run_id = committed_run(out, shoes)
    record = run_record(out, run_id)
    warm_driver_archive(workdir)
    print(f"run {run_id} in {out}: {record.shoes:,} shoes, {record.rounds:,} rounds; {machine_load()}; "
          f"workers {'each pinned to a CPU of its own' if pinned else 'not pinned'}")
    speedups: dict[str, list[float]] = {"duckdb": [], "polars": []}
    for round_number in range(repeat):
        walls = {(engine, count): standalone_seconds(out, run_id, engine, workdir, count, ranges, pinned,
                                                     f"cluster-{round_number}-{count}-{engine}")
                 for count in workers for engine in speedups}
        for engine, each in speedups.items():
            if (engine, 1) in walls and (engine, 2) in walls:
                each.append(walls[engine, 1] / walls[engine, 2])
                print(f"{engine:7s} 2 workers against 1: {each[-1]:.2f}x", flush=True)
    for engine, each in speedups.items():
        if each:
            print(median_line(engine, "2 workers against 1", each, SCALING_TARGET, at_least=True))
    print(machine_load())


def standalone_seconds(out: str, run_id: str, engine: str, workdir: Path, count: int, ranges: list[str],
                       pinned: bool, logs: str) -> float:
    """The wall seconds of one engine's command on a standalone cluster of `count` workers, started here
    (its logs in workdir/`logs`)."""
    (workdir / logs).mkdir()
    with standalone_cluster(workdir / logs, count, pinned=pinned) as (url, env, _):
        figures = command_figures(out, run_id, engine, workdir / f"warehouse-{engine}.duckdb",
                                  ["--master", url, *ranges], env)
    share = startup_share(figures)
    print(f"{engine:7s} {count} worker(s) {figures['wall']:7.2f} s (build {figures['build']:.2f})   "
          f"start-up share {share:.1%} (target < {STARTUP_SHARE_TARGET:.0%}: "
          f"{'ok' if share < STARTUP_SHARE_TARGET else 'too small a run'})\n"
          f"        seconds: {split(figures)}", flush=True)
    return figures["wall"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shoes", type=int, help=f"the run's shoes (default {SHOES:,}; with --composition "
                        f"{COMPOSITION_SHOES:,})")
    parser.add_argument("--out", help="a folder holding a committed run to reuse (dealt there when it holds none)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (the dealt run, the warehouses)")
    parser.add_argument("--s3", action="store_true", help="deal the run into a local S3 server; seconds only")
    parser.add_argument("--master", help="also build with Spark tasks on this master, against one process; "
                        "'standalone': on standalone clusters of --workers one-core workers")
    parser.add_argument("--ranges", type=int, help="with --master: the shoe ranges (default: the command's)")
    parser.add_argument("--workers", default="1,2", help="with --master standalone: the cluster sizes, in order")
    parser.add_argument("--unpinned", action="store_true", help="with --master standalone: let each worker run "
                        "on every CPU (by default each runs on one of its own, as a one-core machine)")
    parser.add_argument("--composition", action="store_true", help="on a run with round_ev rows (`baccarat "
                        "composition` run first): the composition marts' time and memory")
    parser.add_argument("--repeat", type=int, default=1, help="rounds of every command in turn; the verdict "
                        "is on the median ratio")
    args = parser.parse_args()
    if args.composition and (args.s3 or args.master):
        parser.error("--composition measures the command in one process on a local folder: not with --s3 or --master")
    shoes = args.shoes or (COMPOSITION_SHOES if args.composition else SHOES)
    ranges = ["--ranges", str(args.ranges)] if args.ranges else []
    spark = ["--master", args.master, *ranges] if args.master else []
    with scratch_folder("marts-bench-", args.keep) as workdir:
        if args.s3:
            with s3_bucket(workdir / "moto.log") as bucket:
                s3_report(f"{bucket}/marts", shoes, workdir, args.repeat)
        elif args.master == "standalone":
            workers = [int(count) for count in args.workers.split(",")]
            scaling_report(args.out or str(workdir / "out"), shoes, workdir, workers, ranges, not args.unpinned,
                           args.repeat)
        elif spark:
            spark_report(args.out or str(workdir / "out"), shoes, workdir, spark, args.repeat)
        else:
            report(args.out or str(workdir / "out"), shoes, workdir, args.repeat, args.composition)


if __name__ == "__main__":
    main()
