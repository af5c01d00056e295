"""Why Polars' marts are slower than DuckDB's on some machines: reading the rounds' net_ columns.

    python benchmarks/nets_decode_bench.py --out DIR [--files 2]

Over the first --files rounds files of the first committed run in DIR (a range of `marts`: two files,
200,000 shoes), on one thread each (as a Spark task or a one-process range runs them), best of three:
- Polars summing the five net_ columns as the files hold them (DECIMAL(9, 2), Polars' 128-bit decimals);
- Polars summing the same values written as plain INT32 cents to a temporary Parquet file (the same
  compression, dictionary and row groups): what the decoding of the decimal type costs;
- DuckDB summing the net_ columns of the run's files;
- the prep_blocks partial in each engine (the nets of each 100 rounds in run order), the one step of a
  range that reads every round's nets since the simulation counts round_groups.
It prints each time and the ratios; it is a report and exits 0.
"""

import argparse
import os
import tempfile
from pathlib import Path

os.environ["POLARS_MAX_THREADS"] = "1"  # read once, when Polars is imported

import duckdb  # noqa: E402
import polars as pl  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from bench_support import best_of_three  # noqa: E402

from pipeline.runs import committed_runs, read_run  # noqa: E402
from pipeline.storage import Store  # noqa: E402


def as_int32_cents(path: str, nets: list[str], target: Path) -> None:
    """The file's net_ columns as INT32 cents, written as the simulation writes its files."""
    table = pq.read_table(path, columns=nets)
    cents = {name: pc.cast(pc.multiply(table[name].cast(pa.decimal128(12, 2)), 100), pa.int32()) for name in nets}
    row_group = pq.ParquetFile(path).metadata.row_group(0).num_rows
    pq.write_table(pa.table(cents), target, compression="zstd", row_group_size=row_group)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="a folder holding a committed run")
    parser.add_argument("--files", type=int, default=2, help="rounds files read (default: a range's two)")
    arguments = parser.parse_args()
    store = Store.parse(arguments.out)
    record = read_run(store, committed_runs(store)[0])
    paths = [store.reader_path(f.path) for f in record.files_of("rounds")][:arguments.files]
    nets = [name for name in pl.read_parquet_schema(paths[0]) if name.startswith("net_")]
    pl_sum = [pl.col(name).sum() for name in nets]
    scan = pl.concat([pl.scan_parquet(path) for path in paths])
    offsets = [0]
    for path in paths[:-1]:
        offsets.append(offsets[-1] + pq.ParquetFile(path).metadata.num_rows)
    blocks = (pl.concat([pl.scan_parquet(path, row_index_name="run_row", row_index_offset=offset)
                         for path, offset in zip(paths, offsets)])
              .group_by((pl.col("run_row") // 100).set_sorted().alias("block")).agg(pl.len(), *pl_sum))
    con = duckdb.connect()
    con.execute("SET threads = 1")
    files = "[" + ", ".join(f"'{path}'" for path in paths) + "]"
    duck_sum = ", ".join(f"sum({name})" for name in nets)
    numbered = " UNION ALL ".join(f"SELECT {offset} + file_row_number AS run_row, {', '.join(nets)} "
                                  f"FROM read_parquet('{path}', file_row_number = true)"
                                  for path, offset in zip(paths, offsets))
    with tempfile.TemporaryDirectory() as folder:
        copies = [Path(folder) / f"{index}.parquet" for index in range(len(paths))]
        for path, copy in zip(paths, copies):
            as_int32_cents(path, nets, copy)
        ints = pl.concat([pl.scan_parquet(copy) for copy in copies])
        seconds = {
            "Polars, nets as DECIMAL(9, 2)": best_of_three(lambda: scan.select(pl_sum).collect(engine="streaming")),
            "Polars, nets as INT32 cents": best_of_three(lambda: ints.select(pl_sum).collect(engine="streaming")),
            "DuckDB, nets as DECIMAL(9, 2)": best_of_three(
                lambda: con.sql(f"SELECT {duck_sum} FROM read_parquet({files})").to_arrow_table()),
            "Polars, prep_blocks": best_of_three(lambda: blocks.collect(engine="streaming")),
            "DuckDB, prep_blocks": best_of_three(lambda: con.sql(
                f"SELECT run_row // 100 AS block, count(*), {duck_sum} FROM ({numbered}) GROUP BY block").to_arrow_table()),
        }
    rows = offsets[-1] + pq.ParquetFile(paths[-1]).metadata.num_rows
    print(f"{len(paths)} rounds files of run {record.run_id!r}, {rows:,} rounds, one thread, best of three:")
    for name, value in seconds.items():
        print(f"  {name:32s} {value:6.3f} s")
    print(f"decimal against INT32 in Polars: {seconds['Polars, nets as DECIMAL(9, 2)'] / seconds['Polars, nets as INT32 cents']:.1f}x; "
          f"Polars against DuckDB, the nets: {seconds['Polars, nets as DECIMAL(9, 2)'] / seconds['DuckDB, nets as DECIMAL(9, 2)']:.1f}x, "
          f"prep_blocks: {seconds['Polars, prep_blocks'] / seconds['DuckDB, prep_blocks']:.1f}x")


if __name__ == "__main__":
    main()
