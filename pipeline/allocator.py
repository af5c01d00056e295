"""Polars' allocator (jemalloc) keeps the pages its queries free for the rest of the process, and asks the
kernel for them as transparent huge pages of 2 MB where the kernel gives them on request (its `madvise`
mode, as on Debian and Ubuntu). Polars tells it to hand freed pages back within a second, so each shoe
range's query faulted them in again; with two ranges at once (Spark tasks on two cores, or a range per core
in one process) those page faults cost Polars' marts a tenth of their time. Huge pages then cut the faults
that remain, those of the process's first use of its memory, about five times (320,000 to 65,000 for
`marts` at a million shoes), for about a tenth more resident memory (docs/measurements.md). A process stays at
its peak: about 1.1 GB for a Spark task's Python worker, 1.7 GB for `marts` in one process at a million
shoes."""

import os

# Read once, when Polars is imported; Polars adds it after its own settings, so that it wins, and writes the
# whole back: read after Polars' import, the variable says Polars' settings, not the user's.
POLARS_ALLOCATOR_VARIABLE = "_RJEM_MALLOC_CONF"
POLARS_ALLOCATOR_SETTINGS = "dirty_decay_ms:-1,muzzy_decay_ms:-1,thp:always"


def set_polars_allocator() -> None:
    """This process's Polars, imported from now on, keeps the pages it frees, in huge pages where the kernel
    gives them (unless the variable is set)."""
    os.environ.setdefault(POLARS_ALLOCATOR_VARIABLE, POLARS_ALLOCATOR_SETTINGS)
