"""What both benchmark scripts share: dealing a run with the CLI, reading its runs row, and a local
S3 server (moto, in its own process on 127.0.0.1) for the object-store figures."""

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from pipeline.runs import read_run
from pipeline.storage import Store

BUCKET = "bench"


def simulate_command(shoes: int, seed: int, out: str, run_id: str, *extra: str) -> list[str]:
    return ["baccarat", "simulate", "--shoes", str(shoes), "--seed", str(seed), "--out", out,
            "--master", "local[2]", "--run-id", run_id, *extra]


def run_record(out: str, run_id: str) -> dict:
    """The run's record from its runs row (read in this process: set the S3 variables first)."""
    record = read_run(Store.parse(out), run_id)
    if record is None:
        sys.exit(f"no committed run {run_id!r} in {out}")
    return record


@contextlib.contextmanager
def s3_server(log: Path) -> Iterator[str]:
    """moto's S3 server on a free port of 127.0.0.1 with an empty bucket; while it runs, the standard
    AWS variables in os.environ point at it (the CLI's processes inherit them). Yields s3://BUCKET."""
    import boto3

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    endpoint = f"http://127.0.0.1:{port}"
    settings = {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_REGION": "us-east-1",
                "AWS_ENDPOINT_URL": endpoint, "AWS_ALLOW_HTTP": "true"}
    saved = {name: os.environ.get(name) for name in settings}
    with open(log, "w") as sink:
        server = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                                  stdout=sink, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while not _answers(port):
            if server.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"the S3 server did not start:\n{log.read_text()}")
            time.sleep(0.1)
        os.environ.update(settings)
        boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="bench",
                     aws_secret_access_key="bench").create_bucket(Bucket=BUCKET)
        yield f"s3://{BUCKET}"
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def _answers(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0
