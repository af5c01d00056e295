"""What the command line declares of the marts before it loads an engine: the engines, how many shoes
the road marts draw by default, and the most shoe ranges a run is split into. Nothing here imports, so
that a command that builds no mart starts without pyarrow and the engines."""

from enum import Enum


class Engine(str, Enum):
    duckdb = "duckdb"
    polars = "polars"


ROAD_CELLS_SHOES = 200
ROAD_STATS_SHOES = 10_000
MAX_RANGES = 1_000_000
