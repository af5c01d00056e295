"""The errors a user sees as one line, and the exit status each means: bad input (2), or a failure of
the world: I/O, Spark, a store, a commit (1)."""

import errno

# An OSError the world caused, not the path the user gave: a full disk or quota, a file size limit (how a
# full disk is simulated by the tests: RLIMIT_FSIZE), a disk that fails.
WORLD_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


class PipelineError(Exception):
    """A one-line error for the user: the message is shown as it is, and the command exits exit_status."""

    exit_status = 1


class BaccaratError(PipelineError):
    """Bad input (config, arguments, files): exit status 2."""

    exit_status = 2


class WorldFailure(PipelineError):
    """The world failed the work, not its input (a full disk, a store that refuses or fails an operation,
    a failed Spark task or commit): exit status 1."""


def cannot_write(what: str, error: OSError) -> PipelineError:
    """The one line for a file that cannot be written: bad input for the path the user gave (exit 2), the
    world's failure for a full or failing disk (exit 1)."""
    failure = WorldFailure if error.errno in WORLD_ERRNOS else BaccaratError
    return failure(f"cannot write {what}: {error.strerror or error}")
