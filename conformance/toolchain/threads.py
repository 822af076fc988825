"""How many threads the tools of a child may start: its lane's share of the machine's cores.

A run keeps several children at work at once, one per lane (-j, or
pytest-xdist's workers), and by default as many lanes as cores. Then every
core is busy with some lane's own work, and a compiler that starts a thread
per core only contends with the other lanes: its threads cost CPU (waking,
handing work over) and finish no sooner. iree-compile, given the same
modules on a machine of 2 cores: up to 18 % more CPU with its threads than
without; a cold run of 2 lanes on 2 cores over four IREE backends' op cases,
6-11 % faster in wall and 5-11 % in CPU without them, every verdict the same.

So a child whose lane has no more than one core runs its compilers on one
thread. What they produce does not change (MLIR's threading is
deterministic: the same .vmfb byte for byte), only what it costs; a run of one
lane keeps every core for its compiler. The run says how many lanes it keeps
(Settings.lanes); the child applies it once, before its first job
(child.prepare), as it sets torch's thread count.
"""

from __future__ import annotations

import os

_lanes = 1  # this process's run keeps this many children at work at once


def share_cores(lanes: int) -> None:
    """This process is one of `lanes` working at once on this machine."""
    global _lanes
    _lanes = max(1, lanes)


def cores() -> int:
    """The cores this process may run on (its affinity: a container's, a taskset's)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # (not on Linux)
        return os.cpu_count() or 1


def one_core_each() -> bool:
    """Does this process's lane have at most one core to itself? Its compilers then start no threads of their own."""
    return cores() // _lanes <= 1
