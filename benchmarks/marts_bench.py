"""Speed and memory report for the marts, each engine against one plain DuckDB scan.

    python benchmarks/marts_bench.py [--shoes 1000000] [--out DIR] [--keep]

Deals a run with `baccarat simulate` (or reuses the committed run in --out), then measures in
the same session:
- the reference: one plain DuckDB aggregate scan of the run's rounds
  (SELECT outcome, count(*), sum(net_banker) ... GROUP BY outcome), best of three;
- for each engine (duckdb, polars), in a fresh process: every mart of the run, in memory
  (building, not writing), with the command's defaults (road_cells for 200 shoes, road
  statistics over 10,000), its wall time and the process's peak memory (ru_maxrss).
Target: each engine within 20x the scan, peak memory under 6 GB. The script is a report: it
exits 0 whatever the ratios are.
"""

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

from pipeline.runs import committed_runs, read_manifest

RATIO_TARGET = 20.0
MEMORY_TARGET_MB = 6 * 1024
SCAN = "SELECT outcome, count(*), sum(net_banker) FROM read_parquet({files}, hive_partitioning = false) GROUP BY outcome"
ENGINE_RUN = """
import json, resource, sys, time
from pathlib import Path
from pipeline.marts.engines import Engine, build_marts
from pipeline.marts.inputs import ROAD_CELLS_SHOES, ROAD_STATS_SHOES, load_run
run = load_run(Path(sys.argv[1]), sys.argv[2])
started = time.perf_counter()
build_marts(Engine(sys.argv[3]), run, ROAD_CELLS_SHOES, ROAD_STATS_SHOES)
seconds = time.perf_counter() - started
print(json.dumps({"seconds": seconds, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def committed_run(out: Path, shoes: int) -> str:
    """The run in `out`, dealt first when there is none."""
    if not committed_runs(out):
        subprocess.run(["baccarat", "simulate", "--shoes", str(shoes), "--seed", "20261129", "--out", str(out),
                        "--run-id", "bench", "--master", "local[2]"], check=True, stdout=subprocess.DEVNULL)
    return committed_runs(out)[0]


def scan_seconds(out: Path, run_id: str) -> float:
    files = [str(out / f["path"]) for f in read_manifest(out, run_id)["files"] if f["table"] == "rounds"]
    query = SCAN.format(files="[" + ", ".join(f"'{f}'" for f in files) + "]")
    timings = []
    with duckdb.connect() as con:
        for _ in range(3):
            started = time.perf_counter()
            con.execute(query).fetchall()
            timings.append(time.perf_counter() - started)
    return min(timings)


def engine_figures(out: Path, run_id: str, engine: str) -> dict:
    done = subprocess.run([sys.executable, "-c", ENGINE_RUN, str(out), run_id, engine],
                          check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shoes", type=int, default=1_000_000)
    parser.add_argument("--out", type=Path, help="a folder holding a committed run to reuse")
    parser.add_argument("--keep", action="store_true", help="keep the dealt run")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="marts-bench-"))
    try:
        run_id = committed_run(out, args.shoes)
        manifest = read_manifest(out, run_id)
        scan = scan_seconds(out, run_id)
        print(f"run {run_id}: {manifest['shoes']:,} shoes, {manifest['rounds']:,} rounds")
        print(f"plain DuckDB scan: {scan:.3f} s ({manifest['rounds'] / scan / 1e6:.0f}M rows/s)")
        for engine in ("duckdb", "polars"):
            figures = engine_figures(out, run_id, engine)
            ratio = figures["seconds"] / scan
            verdict = "PASS" if ratio <= RATIO_TARGET and figures["peak_mb"] < MEMORY_TARGET_MB else "FAIL"
            print(f"{engine:7s} all marts {figures['seconds']:7.2f} s   ratio {ratio:5.1f} (target <= {RATIO_TARGET:.0f})"
                  f"   peak {figures['peak_mb']:,.0f} MB (target < {MEMORY_TARGET_MB:,})   {verdict}")
    finally:
        if args.out is None and not args.keep:
            shutil.rmtree(out, ignore_errors=True)
        elif args.out is None:
            print(f"kept {out}")


if __name__ == "__main__":
    main()
