"""The bounds of a simulation's parameters, apart from the job so that the CLI reads them without
loading the kernel."""

MAX_SEED = 2**64 - 1
# 10 billion shoes is about 800 billion rounds, some 7 TB of Parquet; a plan of more is refused, so the
# driver's memory stays bounded (it holds one range a task).
MAX_SHOES = 10**10
MAX_PARTITIONS = 1_000_000
