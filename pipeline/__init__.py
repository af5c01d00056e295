"""Baccarat analytics pipeline: exact odds, Spark simulation, DuckDB and Polars marts."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("baccarat-pipeline")
except PackageNotFoundError:  # running from a source tree or a zip shipped to a cluster
    __version__ = "0.1.0"
