"""SIGTERM, as schedulers and supervisors send it (`timeout`, systemd, Kubernetes; to spark-submit, whose JVM
then stops the SparkContext under the job: pipeline/tasks.py), ends a command as a Ctrl-C does: the running
Spark jobs cancelled, the attempt's temporary files removed, the drivers stopped, one line; but that line says
`terminated`, and the status is 143 (128 + SIGTERM, as a shell reports a process the signal ended). Without
this, SIGTERM ended the process at once, silently, leaving a job's temporary files until `baccarat vacuum`.
SIGHUP (the terminal closed, its session ended) does the same, `hung up` and 129, unless the command was started
with it ignored (`nohup`), which it keeps."""

import contextlib
import signal
import threading

INTERRUPTED = 128 + signal.SIGINT
TERMINATED = 128 + signal.SIGTERM
HUNG_UP = 128 + signal.SIGHUP
_WORDS = {signal.SIGTERM: "terminated", signal.SIGHUP: "hung up"}
_stopped_by: list[int] = []  # the signals other than SIGINT that came, in order


def terminate_as_interrupt() -> None:
    """From now on SIGTERM, and SIGHUP unless ignored (`nohup`), do what SIGINT's handler of the moment does
    (the main thread only)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _as_interrupt)
        if signal.getsignal(signal.SIGHUP) is not signal.SIG_IGN:
            signal.signal(signal.SIGHUP, _as_interrupt)


def _as_interrupt(signum, frame) -> None:
    _stopped_by.append(signum)
    handler = signal.getsignal(signal.SIGINT)
    if not callable(handler):  # SIGINT ignored, as a shell starts a job in the background (`&`, cron, nohup)
        raise KeyboardInterrupt
    try:
        handler(signal.SIGINT, frame)
    except KeyboardInterrupt:
        raise
    except Exception:  # noqa: BLE001 (pyspark's cancels the jobs of a JVM the same SIGTERM may have ended)
        raise KeyboardInterrupt from None


def shut_down_under_us() -> KeyboardInterrupt:
    """The stop of a command whose Spark driver was shut down while its job ran: spark-submit's JVM, sent
    SIGTERM, stops the SparkContext in its shutdown hook before this process (its child) hears of it."""
    _stopped_by.append(signal.SIGTERM)
    return KeyboardInterrupt()


@contextlib.contextmanager
def stops_held(then_stop: bool = False):
    """Within, a Ctrl-C, SIGTERM or SIGHUP waits (the main thread only): once the block has ended, with
    `then_stop` one that came stops the command, else it is let go. Let go: for the clean-up of a command being
    stopped already, which a second one cut short, leaving its job's temporary files (`timeout` signals the
    command, then its process group; a Ctrl-C then a SIGTERM). Then stop: for a job's commits, which a stop
    between them left half made (its rounds and shoes committed, not its runs row: `verify` failed until the
    job ran again). SIGTERM and SIGHUP do what SIGINT's handler does (terminate_as_interrupt), so holding SIGINT
    holds them."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came = []
    previous = signal.signal(signal.SIGINT, lambda *_: came.append(True))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if came and then_stop:
        raise KeyboardInterrupt


def ignore_further_stops() -> None:
    """A command that was stopped ends now: a Ctrl-C, SIGTERM or SIGHUP more (`timeout -s INT` sends two) is no
    traceback."""
    for each in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(each, signal.SIG_IGN)


def stopped(status: int) -> bool:
    """Whether `status` is that of a command a Ctrl-C, SIGTERM or SIGHUP stopped."""
    return status in (INTERRUPTED, TERMINATED, HUNG_UP)


def stop_status() -> int:
    """The status of a command that was stopped: 128 + the first of SIGTERM and SIGHUP that came, else 130
    (Ctrl-C)."""
    return 128 + _stopped_by[0] if _stopped_by else INTERRUPTED


def stop_word() -> str:
    """What stopped the command, as its one line says it."""
    return _WORDS[_stopped_by[0]] if _stopped_by else "interrupted"


def terminated() -> bool:
    """Whether SIGTERM or SIGHUP came: a stop that ends the SQL prompt, where a Ctrl-C only cancels."""
    return bool(_stopped_by)
