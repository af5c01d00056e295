"""The `baccarat` command. Loading the CLI's libraries (Spark, numba, DuckDB, Arrow) takes seconds: a
Ctrl-C then ends the command as one during it does, in one line and status 130, not in a traceback."""

import os
import sys

INTERRUPTED = 130


def console() -> None:
    try:
        from pipeline.cli import console as run_command
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr, flush=True)
        os._exit(INTERRUPTED)
    run_command()
