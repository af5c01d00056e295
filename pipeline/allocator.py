"""Polars' allocator (jemalloc) keeps the pages its queries free for the rest of the process. Polars
tells it to hand them back to the kernel within a second, so each shoe range's query faults them in
again; with two ranges at once (Spark tasks on two cores, or a range per core in one process) those
page faults cost Polars' marts a tenth of their time (docs/measurements.md). A process then stays at
its peak: about 1.1 GB for a Spark task's Python worker, 1.7 GB for `marts` in one process at a
million shoes."""

import os

# Read once, when Polars is imported; Polars adds it after its own settings, so that it wins, and writes the
# whole back: read after Polars' import, the variable says Polars' settings, not the user's.
POLARS_ALLOCATOR_VARIABLE = "_RJEM_MALLOC_CONF"
KEEP_FREED_PAGES = "dirty_decay_ms:-1,muzzy_decay_ms:-1"


def keep_freed_pages() -> None:
    """This process's Polars, imported from now on, keeps the pages it frees (unless the variable is set)."""
    os.environ.setdefault(POLARS_ALLOCATOR_VARIABLE, KEEP_FREED_PAGES)
