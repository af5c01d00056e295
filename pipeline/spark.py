"""The one place Spark starts (a SparkContext: the jobs and the marts use Spark to schedule their own
tasks, never its SQL engine): Java and the master checked first, Spark's own output kept in a
log file of its own (or on the terminal when BACCARAT_SPARK_LOG_LEVEL asks), the driver's JVM tuned
for scheduling."""

import contextlib
import logging
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

from pipeline.allocator import POLARS_ALLOCATOR_SETTINGS, POLARS_ALLOCATOR_VARIABLE
from pipeline.config_files import resource
from pipeline.errors import BaccaratError, PipelineError, WorldFailure
from pipeline.home_folders import user_folder
from pipeline.processes import ended, groups_below
from pipeline.spark_archive import MADE_SECONDS, DriverArchive, driver_archive, keep_made_archive
from pipeline.spark_master import LOCAL_MASTER, check_master, workers_here

SPARK_LOG_FILE = "spark.baccarat.logFile"  # the Spark setting naming the file that holds the JVM's output
# pyspark's first call into the JVM imports pyspark.testing.utils, which warns on stderr, once a process, that
# it does not fully support pandas 3 when pandas 3 is installed beside (a BI script's): the pipeline hands
# Spark no pandas, and nothing but the command's own lines may reach the terminal
warnings.filterwarnings("ignore", "PySpark does not yet fully support pandas", FutureWarning)


def check_java() -> Path:
    """The `java` Spark starts (JAVA_HOME's, else the PATH's); else a one-line error."""
    java_home = os.environ.get("JAVA_HOME")
    java = Path(java_home, "bin", "java") if java_home else shutil.which("java")
    if java_home and not Path(java).is_file():
        raise BaccaratError(f"JAVA_HOME is {java_home}, which holds no bin/java: point it at a Java 17 or later, "
                            "or unset it to use the PATH's java")
    if not java or not Path(java).is_file():
        raise BaccaratError("Spark needs Java 17 or later, and none was found: install it (for example "
                            "`apt-get install openjdk-17-jre-headless`) or set JAVA_HOME")
    return Path(java)


SPARK_LOG_LEVELS = ("OFF", "FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE", "ALL")
KEPT_SPARK_LOGS = 20


def _requested_spark_log_level() -> str | None:
    """BACCARAT_SPARK_LOG_LEVEL: Spark's own lines on the terminal, from this level up."""
    level = os.environ.get("BACCARAT_SPARK_LOG_LEVEL") or None
    if level is not None and level.upper() not in SPARK_LOG_LEVELS:
        raise BaccaratError(f"BACCARAT_SPARK_LOG_LEVEL {level!r} is not a log level ({', '.join(SPARK_LOG_LEVELS)})")
    return level and level.upper()


def spark_log_folder() -> Path:
    """Where Spark's output goes when it is kept off the terminal: BACCARAT_LOG_DIR, else the user's
    state folder (XDG_STATE_HOME, by default ~/.local/state) under baccarat/logs."""
    return user_folder("BACCARAT_LOG_DIR", "XDG_STATE_HOME", ".local/state", "logs")


def _new_spark_log() -> Path:
    """A new log file for this process's JVM; only the newest KEPT_SPARK_LOGS stay in the folder."""
    folder = spark_log_folder()
    log = folder / f"spark-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        log.touch()
        for old in sorted(folder.glob("spark-*.log"))[:-KEPT_SPARK_LOGS]:
            old.unlink(missing_ok=True)
    except OSError as error:
        raise BaccaratError(f"cannot write Spark's log in {folder}: {error.strerror or error} "
                            "(set BACCARAT_LOG_DIR to a folder that can be written)") from None
    return log


# The JVMs only schedule tasks and pass their bytes on (the tasks' work runs in Python): quick start-up
# beats peak JIT. The driver starts 0.6 s sooner locally; an executor spends about 3 s less CPU on
# compiling, which on a busy worker is taken from the tasks.
QUICK_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def _driver_java_options(level: str) -> str:
    """The driver JVM's options, paths quoted as a shell would (Spark splits them so): a JVM that crashes
    writes its report (hs_err_pidN.log) beside Spark's logs, not in the current folder."""
    options = [QUICK_JVM, shlex.quote(f"-XX:ErrorFile={spark_log_folder() / 'hs_err_pid%p.log'}")]
    settings = Path(str(resource("conf", "spark", "log4j2.properties")))
    if settings.is_file():
        options += [shlex.quote(f"-Dlog4j2.configurationFile={settings}"), f"-Dbaccarat.spark.log.level={level}"]
    return " ".join(options)


def launched_conf(conf, master: str, level: str, archive: DriverArchive | None = None):
    """`conf` for a driver this process launches on `master` (mapping or making `archive`). The executors'
    quick JVM is a default that a spark.executor.extraJavaOptions of spark-defaults.conf adds to (and
    overrides, flag by flag). Executors on this host (workers_here) map the archive the driver maps: the
    same Java and class path (a worker with another Java refuses it and starts without sharing classes)."""
    conf.setMaster(master).set("spark.driver.memory", "512m")
    archived = f" {archive.java_options()}" if archive else ""
    conf.set("spark.driver.extraJavaOptions", _driver_java_options(level) + archived)
    shared = archived if archive and archive.making is None and workers_here(master) else ""
    return conf.set("spark.executor.defaultJavaOptions", QUICK_JVM + shared)


_MAKING: list = []  # (SparkContext, DriverArchive) of a driver making its archive, while drivers end here
_ENDING_HERE = threading.Event()


@contextlib.contextmanager
def drivers_ending_here() -> Iterator[Callable[[bool], bool]]:
    """Within, a driver this process launches makes the class-data archive of its JVM when there is none
    (pipeline/spark_archive.py). Yields `end(keep)`, for the command's end: with `keep` (the command
    succeeded) the JVM is let exit, for at most MADE_SECONDS, and the archive kept once whole; else the
    JVM is stopped at once and nothing kept (a failed or interrupted command does not wait on it). It
    returns whether a Ctrl-C ended that wait. The console's command runs within."""
    _ENDING_HERE.set()
    try:
        yield _end_drivers
    finally:
        _ENDING_HERE.clear()
        _end_drivers(keep=False)


def _end_drivers(keep: bool) -> bool:
    interrupted = False
    while _MAKING:
        interrupted |= not _exited_with_archive(*_MAKING.pop(), keep=keep and not interrupted)
    return interrupted


def _exited_with_archive(context, archive: DriverArchive, keep: bool = True) -> bool:
    """Stop the SparkContext (its accumulator server would print a traceback once the JVM has gone), let
    the driver's JVM exit (it does once its input ends; without `keep`, it is killed) and keep what it
    wrote; False when a Ctrl-C ended the wait."""
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException

    jvm, status = context._gateway.proc, None
    try:
        with warnings.catch_warnings():  # pyspark's, for a JVM a Ctrl-C killed already (ended_with_its_workers)
            warnings.filterwarnings("ignore", "Unable to cleanly shutdown Spark JVM", RuntimeWarning)
            context.stop()
        if not keep:
            jvm.kill()
        jvm.stdin.close()
        status = jvm.wait(timeout=MADE_SECONDS) if keep else None
    except KeyboardInterrupt:
        jvm.kill()
        return False
    except (OSError, subprocess.TimeoutExpired, Py4JError, PySparkException):
        jvm.kill()
    finally:
        keep_made_archive(archive, status)
    return True


WORKERS_GONE_SECONDS = 5  # a worker killed ends at once; one in the kernel's I/O may take a moment


def ended_with_its_workers(context) -> bool:
    """At a Ctrl-C of a command whose drivers end here (drivers_ending_here), `context`'s JVM is killed, then
    the Python workers of its tasks (their process groups, read before), which are waited for, at most
    WORKERS_GONE_SECONDS; whether all are gone, so that no task writes any more. False, and nothing
    killed, under spark-submit (its JVM is not this process's), in a process that carries on (tests), and
    on a cluster, whose workers are not the JVM's to end."""
    if not _ENDING_HERE.is_set() or under_spark_submit() or not LOCAL_MASTER.match(context.master):
        return False
    jvm = context._gateway.proc
    workers = groups_below(jvm.pid)
    jvm.kill()
    return ended(workers, WORKERS_GONE_SECONDS)


def under_spark_submit() -> bool:
    """Whether spark-submit launched this process: then its JVM and its master are the ones to use."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def spark_context(master: str | None, app_name: str):
    """The one place a SparkContext is made. Under spark-submit the JVM and the master come from there.
    Otherwise this process starts the JVM, with its output (Spark's log, the executors' traces) in a
    new file of spark_log_folder() unless BACCARAT_SPARK_LOG_LEVEL asks for it on the terminal."""
    from pyspark import SparkConf, SparkContext

    requested = _requested_spark_log_level()
    # py4j logs an interrupted call through the root logger, which with no handler of its own would print
    # the traceback on stderr; what the user needs is the one line the CLI prints for a Ctrl-C.
    logging.getLogger().addHandler(logging.NullHandler())
    submitted = under_spark_submit()
    if not submitted:
        java = check_java()
        master = check_master(master or "local[*]")
    if (context := SparkContext._active_spark_context) is not None:  # one a process: later commands of it (the tests') share it
        return context
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if submitted:  # the conf below then holds spark-submit's settings too (executor_settings reads them)
        SparkContext._ensure_initialized()
    level = requested or "ERROR"
    conf = (SparkConf().setAppName(app_name).set("spark.ui.enabled", "false")
            .set("spark.ui.showConsoleProgress", "false").set("spark.log.level", level))
    executor_settings(conf)
    if submitted:
        return _quiet_when_its_jvm_goes(SparkContext.getOrCreate(conf))
    archive = driver_archive(java, _spark_home(), QUICK_JVM, make=_ENDING_HERE.is_set())
    try:
        context = _start_archived(conf, master, level, archive, requested)
    except _StoppedStarting:
        if archive is None or archive.making is not None:
            raise
        # Java checks a mapped archive's header, not that the file holds the pages it names: a truncated one
        # stopped it (SIGBUS). Started without, the driver proves it bad: it goes, the next command makes it.
        context = _start_archived(conf, master, level, None, requested)
        with contextlib.suppress(OSError):
            archive.path.unlink()
    if archive and archive.making:
        _MAKING.append((context, archive))
    return _quiet_when_its_jvm_goes(context)


def _quiet_when_its_jvm_goes(context):
    """`context` with an accumulator server that prints no traceback for a connection the JVM ended, as a
    Ctrl-C, which reaches the JVM too, does (EOFError in pyspark's handler); other errors it prints."""
    server = context._accumulatorServer
    print_error = server.handle_error

    def handle_error(request, client_address) -> None:
        if not isinstance(sys.exc_info()[1], (EOFError, ConnectionError)):
            print_error(request, client_address)

    server.handle_error = handle_error
    return context


def executor_settings(conf):
    """`conf` with what the executors' Python workers need, unless set already."""
    # Polars sizes its thread pool once, from this variable, when a Python worker imports it: a task's cores.
    conf.setIfMissing("spark.executorEnv.POLARS_MAX_THREADS", conf.get("spark.task.cpus", "1"))
    # pipeline/allocator.py; a user's own setting for the executors is spark.executorEnv._RJEM_MALLOC_CONF
    conf.setIfMissing(f"spark.executorEnv.{POLARS_ALLOCATOR_VARIABLE}", POLARS_ALLOCATOR_SETTINGS)
    # Executors given the package by --py-files add it to a worker's path only as a task starts: the daemon,
    # started before, could not import it, so they keep pyspark's own.
    if not conf.get("spark.submit.pyFiles"):
        conf.setIfMissing("spark.python.daemon.module", "pipeline.spark_daemon")
    return conf


def _start_archived(conf, master: str, level: str, archive: DriverArchive | None, requested: str | None):
    """The driver, mapping or making `archive`; the partial file of a driver that did not start goes."""
    try:
        return _start_driver(launched_conf(conf, master, level, archive), log=None if requested else _new_spark_log())
    except BaseException:
        if archive:
            keep_made_archive(archive, exit_status=None)
        raise


def _spark_home() -> Path:
    """Where the driver's jars are: SPARK_HOME, else pyspark's own."""
    import pyspark

    return Path(os.environ.get("SPARK_HOME") or Path(pyspark.__file__).parent)


def _start_driver(conf, log: Path | None):
    """Start the driver's JVM, its output going to `log` (None: to this process's), and its SparkContext."""
    from pyspark import SparkContext
    from pyspark.errors import PySparkRuntimeError
    from pyspark.java_gateway import launch_gateway
    from py4j.protocol import Py4JJavaError

    if log is not None:
        conf.set(SPARK_LOG_FILE, str(log))
    try:
        with _interrupt_held() as interrupted, (log.open("ab") if log else contextlib.nullcontext()) as output:
            gateway = launch_gateway(conf, {"stdout": output, "stderr": output} if output else None)
    except PySparkRuntimeError:
        if interrupted():  # SIGTERM to the process group ended the JVM too (pyspark's launch ignores only SIGINT)
            raise KeyboardInterrupt from None
        reason = f" ({said})" if (said := _launch_reason(log)) else ""
        where = f": its output is in {log}" if log else ""
        raise _StoppedStarting(f"Spark's JVM stopped as it started{reason}{where}") from None
    if interrupted():
        _stop(gateway)
        raise KeyboardInterrupt
    try:
        return SparkContext(conf=conf, gateway=gateway)
    except Py4JJavaError as error:  # a setting Spark refuses, or a master (k8s://) it cannot reach
        failure = _start_failure(error.java_exception, conf.get("spark.master"), log)
        _stop(gateway)
        raise failure from None


class _StoppedStarting(BaccaratError):
    """Spark's JVM exited before it answered: a setting or master it refuses, or an archive it cannot map."""


# The line of a launcher that stopped: its main thread's exception, or spark-submit's own complaint
_LAUNCH_STOPPED = re.compile(r'^(?:Exception in thread "main" (?:[\w$]+\.)*|Error: )(\S.*)$')


def _launch_reason(log: Path | None) -> str:
    """Why the JVM stopped as it started, as its output in `log` says (`SparkException: When running with
    master 'yarn' either HADOOP_CONF_DIR or YARN_CONF_DIR must be set ...`); "" when it does not say."""
    try:
        lines = log.read_text(errors="replace").splitlines() if log else []
    except OSError:
        return ""
    return next((found.group(1) for line in lines if (found := _LAUNCH_STOPPED.match(line))), "")


def _stop(gateway) -> None:
    gateway.shutdown()
    gateway.proc.kill()
    gateway.proc.wait()


def _start_failure(exception, master: str, log: Path | None) -> PipelineError:
    """The one line for a driver that did not start: bad input (2) for a setting Spark refuses (an
    IllegalArgumentException, as of spark-defaults.conf's `spark.scheduler.mode BANANA`), else a failure
    of the world (1), with the innermost cause (a master that refuses the connection) and the log."""
    causes = [exception]
    while len(causes) < 20 and (cause := causes[-1].getCause()) is not None:
        causes.append(cause)
    said = [str(each.getMessage() or each.getClass().getSimpleName()).strip().splitlines()[0] for each in causes]
    if _is_a(exception, "java.lang.IllegalArgumentException"):
        return BaccaratError(f"Spark refused its settings: {said[0]}")
    cause = f" ({said[-1]})" if said[-1] != said[0] else ""
    where = f"; its output is in {log}" if log else ""
    return WorldFailure(f"Spark did not start on {master}: {exception.getClass().getSimpleName()}: {said[0]}{cause}"
                        f"{where}")


def _is_a(exception, class_name: str) -> bool:
    kind = exception.getClass()
    while kind is not None and kind.getName() != class_name:
        kind = kind.getSuperclass()
    return kind is not None


@contextlib.contextmanager
def _interrupt_held():
    """Hold a Ctrl-C back until the block ends (the main thread only); yields whether one came. A JVM
    whose launch pyspark abandons part-way keeps running after this process has gone."""
    if threading.current_thread() is not threading.main_thread():
        yield lambda: False
        return
    received = []
    previous = signal.signal(signal.SIGINT, lambda *_: received.append(True))
    try:
        yield lambda: bool(received)
    finally:
        signal.signal(signal.SIGINT, previous)
