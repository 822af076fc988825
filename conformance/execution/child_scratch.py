"""Each child's temp directory, and the sweep of those whose run was killed.

A child's directory holds its log and its jobs' scratch (a model's job
prints its IR there, hundreds of MB). The supervisor removes it when the
child ends, however it ended; a run killed outright (SIGKILL, the OOM
killer, a CI job's timeout) cannot. So the directory names the process
that made it, `conformance-child-<pid>-<random>`, and the first child a
process starts sweeps the directories of processes that are gone.

A directory is swept only when its maker is not running and nothing in
it was touched for STALE_SECONDS: a temp directory shared across PID
namespaces (containers) may hold the live directory of a process this
one cannot see.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import tempfile
import time

PREFIX = "conformance-child-"
STALE_SECONDS = 600.0
_MADE_BY = re.compile(rf"^{PREFIX}(\d+)-")


def make(directory: str | None = None) -> str:
    """A new child's directory in `directory` (the temp directory by default), after sweeping the abandoned ones once."""
    swept(directory or tempfile.gettempdir())
    return tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=directory)


@functools.cache
def swept(directory: str) -> int:
    """Remove the child directories in `directory` whose process is gone (once per process); how many."""
    removed = 0
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return 0
    for entry in entries:
        made_by = _MADE_BY.match(entry.name)
        if made_by and int(made_by[1]) != os.getpid() and not _running(int(made_by[1])) and _stale(entry.path):
            shutil.rmtree(entry.path, ignore_errors=True)
            removed += 1
    return removed


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's
        return True
    return True


def _stale(path: str) -> bool:
    """Nothing in `path` (its entries, the log) changed for STALE_SECONDS."""
    try:
        newest = max([os.stat(path).st_mtime, *(entry.stat().st_mtime for entry in os.scandir(path))])
    except OSError:
        return False
    return time.time() - newest > STALE_SECONDS
