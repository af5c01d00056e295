"""Baccarat analytics pipeline: exact odds, Spark simulation, DuckDB and Polars marts.

Importing the package runs nothing else: `baccarat` imports it before pipeline/console.py's guard, which ends a
Ctrl-C as the command starts in one line and status 130, so whatever it took time to load here (its version,
from importlib.metadata) was a window where a Ctrl-C printed a traceback."""


def __getattr__(name: str) -> str:
    """`pipeline.__version__`, looked up when asked for."""
    if name != "__version__":
        raise AttributeError(f"module 'pipeline' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("baccarat-pipeline")
    except PackageNotFoundError:  # running from a source tree or a zip shipped to a cluster
        return "0.1.0"
