"""What both benchmark scripts share: dealing a run with the CLI, reading its runs row, and a local
S3 server (moto, in its own process on 127.0.0.1) for the object-store figures."""

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from pipeline.runs import read_run
from pipeline.storage import Store

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))
from local_s3 import aws_environment, s3_server  # noqa: E402  (the tests' local S3 server)

BUCKET = "bench"


def simulate_command(shoes: int, seed: int, out: str, run_id: str, *extra: str) -> list[str]:
    return ["baccarat", "simulate", "--shoes", str(shoes), "--seed", str(seed), "--out", out,
            "--master", "local[2]", "--run-id", run_id, *extra]


def machine_load() -> str:
    """Other work on the machine skews every figure: say how much there was."""
    return "load average {:.1f} {:.1f} {:.1f} on {} cores".format(*os.getloadavg(), os.cpu_count())


def run_record(out: str, run_id: str) -> dict:
    """The run's record from its runs row (read in this process: set the S3 variables first)."""
    record = read_run(Store.parse(out), run_id)
    if record is None:
        sys.exit(f"no committed run {run_id!r} in {out}")
    return record


@contextlib.contextmanager
def s3_bucket(log: Path) -> Iterator[str]:
    """The tests' local S3 server with an empty bucket; while it runs, the standard AWS variables in
    os.environ point at it (the CLI's processes inherit them). Yields s3://BUCKET."""
    import boto3

    with s3_server(log) as endpoint, aws_environment(endpoint, "bench"):
        boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket=BUCKET)
        yield f"s3://{BUCKET}"
