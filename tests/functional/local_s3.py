"""A local S3-compatible server for the tests and the benchmarks: moto's server in its own process on
127.0.0.1 (an in-process server can deadlock with delta-rs), and the AWS variables that point at it."""

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# moto's server, with each PUT (and multipart completion) of an object made one step: moto checks
# If-None-Match and then stores the object, so two writers of one Delta log version could both pass the
# check in its threaded server, and one commit be lost. S3 makes the two one atomic step.
ATOMIC_CONDITIONAL_PUTS = """
import sys, threading
from moto.s3.responses import S3Response
from moto.server import main

one_at_a_time = threading.RLock()

def atomic(unlocked):
    def locked(*arguments, **keywords):
        with one_at_a_time:
            return unlocked(*arguments, **keywords)
    return locked

for name in ("put_object", "_key_response_post"):
    setattr(S3Response, name, atomic(getattr(S3Response, name)))
main(sys.argv[1:])
"""


@contextlib.contextmanager
def s3_server(log: Path, **server_env: str) -> Iterator[str]:
    """A running server (its output in `log`); yields its endpoint URL, and stops it afterwards."""
    port = free_port()
    with open(log, "w") as sink:
        process = subprocess.Popen([sys.executable, "-c", ATOMIC_CONDITIONAL_PUTS, "-H", "127.0.0.1", "-p", str(port)],
                                   stdout=sink, stderr=subprocess.STDOUT, env=os.environ | server_env)
    try:
        deadline = time.monotonic() + 60
        while socket.socket().connect_ex(("127.0.0.1", port)) != 0:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the S3 server did not start:\n{log.read_text()[-2000:]}")
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextlib.contextmanager
def aws_environment(endpoint: str, key: str = "testing") -> Iterator[None]:
    """The standard AWS variables pointing at `endpoint` in os.environ (child processes inherit them)."""
    settings = {"AWS_ACCESS_KEY_ID": key, "AWS_SECRET_ACCESS_KEY": key, "AWS_REGION": "us-east-1",
                "AWS_ENDPOINT_URL": endpoint, "AWS_ALLOW_HTTP": "true"}
    saved = {name: os.environ.get(name) for name in settings}
    os.environ.update(settings)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextlib.contextmanager
def silent_endpoint() -> Iterator[str]:
    """An endpoint on 127.0.0.1 that accepts every connection and never answers (a store that hangs);
    yields its URL, and closes it and its connections afterwards."""
    listener = socket.create_server(("127.0.0.1", 0))
    held = []

    def take_connections():
        with contextlib.suppress(OSError):  # the listener shut down
            while True:
                held.append(listener.accept()[0])

    taker = threading.Thread(target=take_connections, daemon=True)
    taker.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        listener.shutdown(socket.SHUT_RDWR)  # wakes the accept
        listener.close()
        taker.join(timeout=10)
        for connection in held:
            connection.close()
