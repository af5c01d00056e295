"""The `baccarat` command. Loading the CLI's libraries (Spark, numba, DuckDB, Arrow) takes seconds: a
Ctrl-C or SIGTERM then ends the command as one during it does, in one line and status 130 or 143, not in
a traceback."""

import os
import sys

from pipeline.termination import stop_status, stop_word, terminate_as_interrupt


def console() -> None:
    terminate_as_interrupt()
    try:
        from pipeline.cli import console as run_command
    except KeyboardInterrupt:
        print(f"error: {stop_word()}", file=sys.stderr, flush=True)
        os._exit(stop_status())
    run_command()
