"""How many cores this process may use, as loky counts them: the host's, less what the process's CPU
affinity (taskset, a cpuset) and its cgroup's CPU quota (a container's limit) leave it. os.cpu_count()
sees the host alone: in a container given 2 CPUs of a 64-core host, the marts built 64 shoe ranges at
once, each holding its own rounds in memory, and DuckDB ran 64 threads."""

import functools


@functools.cache
def usable_cores() -> int:
    from loky import cpu_count

    return cpu_count()
