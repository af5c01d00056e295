"""`baccarat marts --out s3://...` with the S3 server paused (SIGSTOP) after the command's first request
ended after 90 s with "output path s3://... is not writable: ... Timeout was reached": a store that stopped
answering read as one that refuses to be written. The line now says the endpoint did not answer, and for how
long, as it does when the first request finds no answer."""

import contextlib
import http.server
import threading

import pytest

from pipeline.storage import StorageError, Store, location


class _AnswersOnlyHead(http.server.BaseHTTPRequestHandler):
    """Answers HEAD (a bucket that exists); holds every other request unanswered until the server stops."""

    def do_HEAD(self):  # noqa: N802 (http.server's name)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_PUT(self):  # noqa: N802
        self.server.stopping.wait()

    def log_message(self, *args):
        pass


@contextlib.contextmanager
def endpoint_that_stops_answering():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _AnswersOnlyHead)
    server.stopping = threading.Event()
    serving = threading.Thread(target=server.serve_forever, daemon=True)
    serving.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.stopping.set()
        server.shutdown()
        server.server_close()


def test_a_store_that_stops_answering_is_not_said_to_be_unwritable(monkeypatch):
    monkeypatch.setattr(location, "SILENT_SECONDS", 1)
    monkeypatch.setattr(location, "_ATTEMPTS", 1)
    with endpoint_that_stops_answering() as endpoint:
        for name, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                            "AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL": endpoint, "AWS_ALLOW_HTTP": "true"}.items():
            monkeypatch.setenv(name, value)
        with pytest.raises(StorageError) as raised:
            Store.parse("s3://bucket1/data").check_writable()
    assert str(raised.value) == f"s3://bucket1/data: the S3 endpoint {endpoint} did not answer within 1 s"
