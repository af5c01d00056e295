"""Spark masters: a --master's form checked before anything starts, and a standalone master asked
whether it answers Spark's protocol, each wrong one in one line."""

import ipaddress
import re
import socket
import struct

from pipeline.errors import BaccaratError, WorldFailure

LOCAL_MASTER = re.compile(r"^local(\[(\*|[1-9]\d*)(,[1-9]\d*)?\])?$")
# local[N]: the driver's JVM starts thread pools of N threads; at local[99999] it ran out of native threads
# and the command ended in a Py4JJavaError traceback (local[5000] started, in 13 s)
MAX_LOCAL_THREADS = 1024
MASTER_CONNECT_SECONDS = 5
_STREAM_REQUEST, _STREAM_FAILURE = 6, 8  # the types of two messages of Spark's network protocol
_PROBE_STREAM = b"files/baccarat-master-probe"  # a file no master serves


def check_master_form(master: str) -> str:
    """A master Spark can use, judged by its form alone; else a one-line error (bad input). The CLI checks it
    as it reads --master, so that a command with nothing for Spark to do (a run already committed) refuses
    a malformed master too, rather than succeeding until the day Spark starts."""
    if (local := LOCAL_MASTER.match(master)) and local.group(2) not in (None, "*") \
            and int(local.group(2)) > MAX_LOCAL_THREADS:
        raise BaccaratError(f"Spark master {master!r}: at most local[{MAX_LOCAL_THREADS:,}] (local[N] starts N "
                            "threads in each of the driver's thread pools; local[*] takes one per core)")
    if local or master == "yarn" or master.startswith("k8s://"):
        return master
    if not master.startswith("spark://"):
        raise BaccaratError(f"unknown Spark master {master!r}: use local, local[N], local[*], spark://HOST:PORT, "
                            "yarn or k8s://HOST:PORT")
    if any(not host or not port.isdigit() for host, port in _standalone_addresses(master)):
        raise BaccaratError(f"Spark master {master!r}: expected spark://HOST:PORT")
    return master


def _standalone_addresses(master: str) -> list[tuple[str, str]]:
    """The (host, port) of each master a spark:// URL names."""
    return [(host, port) for host, _, port in (address.rpartition(":")
                                               for address in master.removeprefix("spark://").split(","))]


def workers_here(master: str) -> bool:
    """Whether `master` is a standalone master on a loopback address alone: only workers on this host can
    reach it, so its executors start from this host's Java and Spark."""
    return master.startswith("spark://") and all(_loopback(host) for host, _ in _standalone_addresses(master))


def _loopback(host: str) -> bool:
    try:
        return host == "localhost" or ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name
        return False


def check_master(master: str) -> str:
    """A master Spark can use (check_master_form), and for a standalone cluster one that answers; else a
    one-line error: a failure of the world for a master that does not answer (Spark itself waits a minute
    for an unreachable master, then prints hundreds of lines). A URL naming several masters (standalone
    high availability: Spark registers with each, and the one leading answers) needs one of them to answer,
    as Spark does: a standby that is down is the failure it is there for."""
    check_master_form(master)
    if not master.startswith("spark://"):
        return master
    addresses, unreachable = _standalone_addresses(master), []
    for host, port in addresses:
        try:
            _check_answers(master, host, int(port))
        except OSError as error:
            unreachable.append((f"{host}:{port}", error.strerror or str(error)))
    if len(unreachable) < len(addresses):
        return master
    if len(unreachable) == 1:
        raise WorldFailure(f"cannot reach the Spark master {master}: {unreachable[0][1]}")
    raise WorldFailure(f"cannot reach any of the Spark masters {master}: "
                       + "; ".join(f"{address}: {reason}" for address, reason in unreachable))


def _check_answers(master: str, host: str, port: int) -> None:
    """Nothing when host:port answers Spark's protocol; a server there that does not is bad input (an
    OSError: nothing takes the connection)."""
    if not _answers_spark_rpc(host, port):
        raise BaccaratError(f"{master} is not a Spark master: {host}:{port} accepts connections but does not "
                            "answer Spark's requests")


def _answers_spark_rpc(host: str, port: int) -> bool:
    """Whether host:port answers Spark's network protocol: a request for a stream the master does not
    serve (a frame: its length, message type 6, the stream's name) gets a failure reply naming that stream
    (type 8), and the master logs nothing above INFO. A server that only accepts the connection would
    make Spark wait minutes for the registration."""
    request = struct.pack(">qbi", 13 + len(_PROBE_STREAM), _STREAM_REQUEST, len(_PROBE_STREAM)) + _PROBE_STREAM
    with socket.create_connection((host, port), timeout=MASTER_CONNECT_SECONDS) as connection:
        connection.sendall(request)
        try:
            reply = connection.makefile("rb").read(len(request))
        except TimeoutError:
            return False
    return len(reply) == len(request) and reply[8] == _STREAM_FAILURE and reply[9:] == request[9:]
