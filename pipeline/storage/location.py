"""Where OUT is: a local folder or `scheme://bucket/prefix`, parsed from what a user typed; its pyarrow
filesystem, and the settings and credentials each scheme takes from the environment. A new store (a
scheme) is a change here."""

import contextlib
import os
import re
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from urllib.parse import unquote, urlparse

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from pipeline.at_once import each_at_once
from pipeline.errors import BaccaratError
from pipeline.storage.errors import StorageError, first_line
from pipeline.storage.layout import check_data_folder

OBJECT_STORE_SCHEMES = ("s3", "gs", "az", "abfss")
WAREHOUSE = "warehouse.duckdb"
REQUESTS_AT_ONCE = 16  # to an object store, where each is a round trip
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
# A command's first request to an S3 store (its bucket check) is answered within this, or the command ends
# naming the endpoint: a store that is up answers a bucket check in well under a second. Two attempts of half
# each, the second on a new connection.
FIRST_ANSWER_SECONDS = 10
_FIRST_ATTEMPTS = 2
# Any later request to S3 may go this long without a byte (pyarrow's request_timeout, which the AWS SDK makes
# curl's low-speed time on Linux: not a bound on a whole transfer), in each of its attempts; S3 under load
# answers in seconds, and a slow transfer still moves bytes. A request ends within about a minute.
SILENT_SECONDS = 20
_ATTEMPTS = 3
_CONNECT_SECONDS = 5
_NO_ANSWER = "curlCode: 28,"  # curl's CURLE_OPERATION_TIMEDOUT in the AWS SDK's error: no byte in time
# The variables each store's settings and credentials come from (see _s3_settings and _aws_environment).
_SETTINGS_VARIABLES = {
    "s3": ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION", "AWS_DEFAULT_REGION",
           "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_ALLOW_HTTP"),
    "az": ("AZURE_STORAGE_ACCOUNT_NAME",),
}


def parse_location(text: str) -> str:
    """OUT's URI (or absolute local path) from what a user typed, or a one-line error; a path that only
    looks like a URI (`s3:x`, `s3:/x`) is refused rather than taken as a local folder."""
    text = str(text).strip()
    if not text:
        raise BaccaratError("the output location is empty")
    match = _SCHEME.match(text)
    if match is None:
        return _local_folder(Path(text).expanduser().absolute())
    scheme = match[1].lower()
    if scheme == "file" and text.startswith("file:///"):
        return _local_folder(Path(unquote(urlparse(text).path)).absolute())
    if scheme not in OBJECT_STORE_SCHEMES:
        raise BaccaratError(
            f"{text!r}: unknown scheme {scheme + ':'!r}; use a local folder or s3://, gs://, az://, "
            "abfss:// (write ./" + text + " for a local folder of that name)")
    parsed = urlparse(text)
    if not text.lower().startswith(f"{scheme}://") or not parsed.netloc:
        raise BaccaratError(f"{text!r} is not a valid URI: write {scheme}://BUCKET/PREFIX")
    prefix = parsed.path.strip("/")
    if any(part in ("", ".", "..") for part in prefix.split("/")) and prefix:
        raise BaccaratError(f"{text!r}: the prefix may not hold empty, '.' or '..' parts")
    if parsed.query or parsed.fragment:
        raise BaccaratError(f"{text!r}: a URI with '?' or '#' is not a location")
    bucket = parsed.netloc.split("@")[0] if scheme == "abfss" else parsed.netloc
    if scheme in ("s3", "gs") and not _BUCKET.match(bucket):
        raise BaccaratError(f"{text!r}: {bucket!r} is not a valid bucket name")
    return f"{scheme}://{parsed.netloc}" + (f"/{prefix}" if prefix else "")


def _local_folder(path: Path) -> str:
    """A local folder's absolute path; deltalake would read a '%' with two hex digits in it ('%20') as an
    escaped character and commit to another folder than the one its files are in, so such a path is refused."""
    if "\\" in str(path):
        # deltalake reads a backslash as a '/': simulate wrote its files under the folder and its commit under
        # another, failed (exit 1) and left a log that verify called damaged
        raise BaccaratError(f"{str(path)!r}: a local folder whose path holds a backslash cannot hold Delta tables "
                            "(deltalake reads it as '/'): choose another folder")
    if _ESCAPE.search(str(path)):
        raise BaccaratError(f"{str(path)!r}: a local folder whose path holds '%' and two hex digits cannot hold "
                            "Delta tables (deltalake reads them as an escaped character): choose another folder")
    return str(path)


@dataclass(frozen=True)
class Location:
    """OUT: a local folder (kept as an absolute path) or `scheme://bucket/prefix`."""

    uri: str

    @classmethod
    def parse(cls, text: str):
        """A store from what a user typed, or a one-line error (see parse_location)."""
        return cls(parse_location(text))

    @property
    def scheme(self) -> str:
        return self.uri.split("://", 1)[0] if "://" in self.uri else "file"

    @property
    def is_local(self) -> bool:
        return self.scheme == "file"

    def __str__(self) -> str:
        return self.uri

    def location(self, *parts: str) -> str:
        """A URI (or local path) under OUT, for people and for deltalake and polars."""
        return "/".join([self.uri.rstrip("/"), *parts])

    def local_path(self, *parts: str) -> Path:
        """A path under a local OUT (for DuckDB's own file reader and the warehouse file)."""
        if not self.is_local:
            raise BaccaratError(f"{self.uri} is not a local folder")
        return Path(self.uri, *parts)

    def fs_path(self, *parts: str) -> str:
        if self.is_local:
            return str(Path(self.uri, *parts))
        _, rest = self.uri.split("://", 1)
        if self.scheme == "abfss":
            container, _, path = rest.partition("@")
            rest = container + ("/" + path.split("/", 1)[1] if "/" in path else "")
        return "/".join([rest.rstrip("/"), *parts])

    def reader_path(self, relative: str) -> str:
        """The path of a file under OUT as pyarrow's filesystem, DuckDB and polars take it."""
        return self.fs_path(relative) if self.is_local else self.location(relative)

    def filesystem_path(self, reader_path: str) -> str:
        """A reader_path as OUT's pyarrow filesystem takes it."""
        if self.is_local:
            return reader_path
        return self.fs_path(reader_path.removeprefix(self.location() + "/"))

    def warehouse_path(self) -> Path:
        """The default warehouse: a local file, inside a local OUT (not a file nor a table's folder), else in
        the current folder."""
        if not self.is_local:
            return Path(WAREHOUSE).absolute()
        check_data_folder(Path(self.uri))
        return Path(self.uri, WAREHOUSE)

    def report_path(self) -> Path:
        return Path(self.uri if self.is_local else ".", "report", "index.html").absolute()

    @cached_property
    def filesystem(self) -> pafs.FileSystem:
        if self.is_local:
            return pafs.LocalFileSystem()
        if self.scheme == "s3":
            return _s3_filesystem(SILENT_SECONDS, _ATTEMPTS)
        if self.scheme == "gs":
            return pafs.GcsFileSystem()
        return pafs.AzureFileSystem(account_name=self._azure_account())

    @cached_property
    def _first_request_filesystem(self) -> pafs.FileSystem:
        """OUT's filesystem for a command's first request (first_answer): on S3, one that waits less."""
        if self.scheme != "s3":
            return self.filesystem
        return _s3_filesystem(FIRST_ANSWER_SECONDS / _FIRST_ATTEMPTS, _FIRST_ATTEMPTS)

    def first_answer(self, path: str) -> pafs.FileInfo:
        """What the store says of `path` (under OUT), asked as a command's first request: an S3 endpoint that
        sends nothing for FIRST_ANSWER_SECONDS is a StorageError naming it (other errors are OSError)."""
        try:
            return self._first_request_filesystem.get_file_info(path)
        except OSError as error:
            if silent := self._no_answer(error):
                raise StorageError(f"{self.uri}: {silent}") from None
            raise

    def _no_answer(self, error: OSError, seconds: float = FIRST_ANSWER_SECONDS, attempts: int = 1) -> str | None:
        """The one line for an S3 endpoint that sent nothing for `seconds` (on each of `attempts`), else None."""
        if self.scheme != "s3" or _NO_ANSWER not in str(error):
            return None
        times = f", {attempts} times" if attempts > 1 else ""
        return f"the S3 endpoint {_s3_endpoint()} did not answer within {seconds:g} s{times}"

    def _azure_account(self) -> str:
        if self.scheme == "abfss":
            return self.uri.split("@", 1)[1].split("/", 1)[0].split(".", 1)[0]  # ACCOUNT[.dfs.core.windows.net]
        account = os.environ.get("AZURE_STORAGE_ACCOUNT_NAME")
        if not account:
            raise BaccaratError("az:// needs AZURE_STORAGE_ACCOUNT_NAME in the environment")
        return account

    def aws_environment(self) -> dict[str, str]:
        """The AWS variables (S3 only) that deltalake and polars take as their settings."""
        if self.scheme != "s3":
            return {}
        names = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
                 "AWS_ENDPOINT_URL", "AWS_ALLOW_HTTP")
        options = {name: os.environ[name] for name in names if os.environ.get(name)}
        if "AWS_REGION" not in options and os.environ.get("AWS_DEFAULT_REGION"):
            options["AWS_REGION"] = os.environ["AWS_DEFAULT_REGION"]
        return options

    def settings_names(self) -> list[str]:
        """The environment variables this process takes the store's settings and credentials from
        (names only: their values never leave the process)."""
        return [name for name in _SETTINGS_VARIABLES.get(self.scheme, ()) if os.environ.get(name)]

    def check_reachable_here(self, names: list[str]) -> None:
        """Inside a task: the variables `names` that the driver takes the store's settings from are set
        here too, and OUT answers; else an OSError naming what is missing, before anything is written."""
        host = socket.gethostname()
        if missing := [name for name in names if not os.environ.get(name)]:
            raise PermissionError(f"the executor on {host} lacks {', '.join(missing)}, which the driver uses for "
                                  f"{self.uri}: give them to the executors (spark.executorEnv.NAME)")
        try:
            self._first_request_filesystem.get_file_info(self.fs_path())
        except OSError as error:
            raise ConnectionError(f"the executor on {host} cannot reach {self.uri}: "
                                  f"{self._no_answer(error) or first_line(error)}") from None

    def file_sizes(self, paths: list[str]) -> list[int | None]:
        """The size of each regular file at `paths` (under OUT), None where there is none; on an object
        store asked side by side (a request each, which pyarrow would make one after another)."""
        with self._errors("is not readable"):
            if self.is_local:
                found = self.filesystem.get_file_info([self.fs_path(path) for path in paths])
            else:
                found = each_at_once(lambda path: self.filesystem.get_file_info(self.fs_path(path)), paths,
                                     REQUESTS_AT_ONCE)
        return [info.size if info.type == pafs.FileType.File else None for info in found]

    def parquet_footers(self, paths: list[str]) -> list[pq.FileMetaData | str]:
        """The Parquet footer of each file at `paths` (under OUT), or why it cannot be read, read side
        by side (on an object store each footer is a request or two)."""
        return each_at_once(lambda path: parquet_footer(self.fs_path(path), self.filesystem), paths, REQUESTS_AT_ONCE)

    @contextlib.contextmanager
    def _errors(self, what: str) -> Iterator[None]:
        try:
            yield
        except BaccaratError:
            raise
        except (OSError, pa.ArrowException) as error:
            if isinstance(error, OSError) and (silent := self._no_answer(error, SILENT_SECONDS, _ATTEMPTS)):
                raise StorageError(f"{self.uri}: {silent}") from None  # it stopped answering: not a permission
            raise StorageError(f"output path {self.uri} {what}: {first_line(error)}") from None


def parquet_footer(path: str, filesystem: pafs.FileSystem) -> pq.FileMetaData | str:
    """The Parquet footer of the file at `path` of `filesystem`, or why it cannot be read (one line)."""
    try:
        metadata = pq.read_metadata(path, filesystem=filesystem)
        metadata.schema.to_arrow_schema()  # a footer whose schema Arrow cannot take is unreadable too
        return metadata
    except (OSError, pa.ArrowException, UnicodeDecodeError) as error:  # a flipped byte in a column's name
        return first_line(error)


def _s3_filesystem(silent_seconds: float, attempts: int) -> pafs.S3FileSystem:
    """OUT's S3 filesystem, each attempt of a request ending after `silent_seconds` without a byte."""
    # a delayed open uploads a file smaller than a part with one PUT, not a multipart upload's three
    retries = pafs.AwsStandardS3RetryStrategy(max_attempts=attempts)
    return pafs.S3FileSystem(**_s3_settings(), connect_timeout=_CONNECT_SECONDS, request_timeout=silent_seconds,
                             allow_delayed_open=True, retry_strategy=retries)


def _s3_endpoint() -> str:
    """The S3 endpoint the requests go to, as the environment names it (AWS's own for the region, else)."""
    if endpoint := os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL"):
        return endpoint
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
    return f"https://s3.{region}.amazonaws.com"


def _s3_settings() -> dict:
    """pyarrow's S3 settings from the standard AWS environment variables."""
    settings: dict = {}
    if region := os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION"):
        settings["region"] = region
    if endpoint := os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL"):
        parsed = urlparse(endpoint)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise BaccaratError(f"AWS_ENDPOINT_URL {endpoint!r} is not an http(s) URL")
        if parsed.scheme == "http" and os.environ.get("AWS_ALLOW_HTTP", "").lower() != "true":
            raise BaccaratError(f"AWS_ENDPOINT_URL {endpoint!r} is plain http: set AWS_ALLOW_HTTP=true to allow it")
        settings["endpoint_override"] = parsed.netloc
        settings["scheme"] = parsed.scheme
    return settings
