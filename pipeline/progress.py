"""Progress from inside the tasks: after each batch of shoes, a task sends the driver one UDP datagram
saying how far its range has got. Best effort by design: a datagram lost, refused or never sent only
makes the progress coarser (the driver still counts whole tasks); a task never waits for one, never
fails because of one, and writes the same rows whatever becomes of it."""

import secrets
import socket
from dataclasses import dataclass

MAX_DATAGRAM = 128
MAX_DATAGRAMS_PER_DRAIN = 10_000  # the driver's work per look stays bounded, whatever arrives


@dataclass(frozen=True)
class Address:
    """Where tasks send their progress, and the token without which the driver ignores a datagram."""

    family: int
    host: str
    port: int
    token: str


class _Endpoint:
    """Holds a socket, or None when there is no channel; closes it on leaving a with block."""

    socket = None  # no channel

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        if self.socket is not None:
            self.socket.close()


class TaskProgress(_Endpoint):
    """A task's end of the channel: call it with the shoes and rounds its range has dealt so far."""

    def __init__(self, address: Address | None, range_index: int):
        self.address, self.range_index, self.socket = address, range_index, None
        if address is not None:
            try:
                self.socket = socket.socket(address.family, socket.SOCK_DGRAM)
                self.socket.setblocking(False)
            except OSError:
                self.socket = None

    def __call__(self, shoes: int, rounds: int) -> None:
        if self.socket is None:
            return
        message = f"{self.address.token} {self.range_index} {shoes} {rounds}".encode()
        try:
            self.socket.sendto(message, (self.address.host, self.address.port))
        except OSError:
            pass  # unreachable, refused, a full buffer: the progress is coarser, the task goes on


class Listener(_Endpoint):
    """The driver's end: for each range, the furthest any attempt has reported, never beyond the range."""

    def __init__(self, range_sizes: list[int], driver_host: str, bind_host: str | None = None):
        self.sizes = range_sizes
        self.range_shoes, self.range_rounds = [0] * len(range_sizes), [0] * len(range_sizes)
        self.shoes = self.rounds = 0
        self.socket, self.address = None, None
        try:
            family, _, _, _, (host, *_) = socket.getaddrinfo(driver_host, 0, type=socket.SOCK_DGRAM)[0]
            listening = socket.socket(family, socket.SOCK_DGRAM)
            try:
                listening.setblocking(False)
                listening.bind((bind_host or host, 0))
            except OSError:
                listening.close()
                raise
        except OSError:
            return  # no channel: progress by whole tasks only
        self.socket = listening
        self.address = Address(family, host, listening.getsockname()[1], secrets.token_hex(16))

    @classmethod
    def for_spark(cls, context, range_sizes: list[int]) -> "Listener":
        """Listening where the executors reach the driver: on the loopback in local mode (the tasks run
        on this machine), else at the driver's address."""
        if context.master.startswith("local"):
            return cls(range_sizes, "127.0.0.1")
        conf = context.getConf()
        return cls(range_sizes, conf.get("spark.driver.host", "127.0.0.1"), conf.get("spark.driver.bindAddress", None))

    def drain(self) -> None:
        """Take in what has arrived, without waiting."""
        for _ in range(MAX_DATAGRAMS_PER_DRAIN if self.socket is not None else 0):
            try:
                self._take(self.socket.recv(MAX_DATAGRAM))
            except OSError:  # nothing more has arrived
                return

    def _take(self, datagram: bytes) -> None:
        try:
            token, index, shoes, rounds = datagram.decode("ascii").split()
            index, shoes, rounds = int(index), int(shoes), int(rounds)
        except ValueError:
            return
        if token != self.address.token or not 0 <= index < len(self.sizes) or not 0 <= shoes <= self.sizes[index]:
            return
        if shoes > self.range_shoes[index]:
            self.shoes += shoes - self.range_shoes[index]
            self.range_shoes[index] = shoes
        if rounds > self.range_rounds[index]:
            self.rounds += rounds - self.range_rounds[index]
            self.range_rounds[index] = rounds
