"""SIGTERM, as schedulers and supervisors send it (`timeout`, systemd, Kubernetes; to spark-submit, whose JVM
then stops the SparkContext under the job: pipeline/tasks.py), ends a command as a Ctrl-C does: the running
Spark jobs cancelled, the attempt's temporary files removed, the drivers stopped, one line; but that line says
`terminated`, and the status is 143 (128 + SIGTERM, as a shell reports a process the signal ended). Without
this, SIGTERM ended the process at once, silently, leaving a job's temporary files until `baccarat vacuum`."""

import signal
import threading

INTERRUPTED = 128 + signal.SIGINT
TERMINATED = 128 + signal.SIGTERM
_terminated = threading.Event()


def terminate_as_interrupt() -> None:
    """From now on SIGTERM does what SIGINT's handler of the moment does (the main thread only)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _as_interrupt)


def _as_interrupt(signum, frame) -> None:
    _terminated.set()
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
    _terminated.set()
    return KeyboardInterrupt()


def ignore_further_stops() -> None:
    """A command that was stopped ends now: a Ctrl-C or SIGTERM more (`timeout -s INT` sends two) is no
    traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def stopped(status: int) -> bool:
    """Whether `status` is that of a command a Ctrl-C or SIGTERM stopped."""
    return status in (INTERRUPTED, TERMINATED)


def stop_status() -> int:
    """The status of a command that was stopped: 143 once SIGTERM came, else 130 (Ctrl-C)."""
    return TERMINATED if _terminated.is_set() else INTERRUPTED


def stop_word() -> str:
    """What stopped the command, as its one line says it."""
    return "terminated" if _terminated.is_set() else "interrupted"


def terminated() -> bool:
    return _terminated.is_set()
