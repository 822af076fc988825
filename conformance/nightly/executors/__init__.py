"""Where a nightly's jobs run: `start` picks an executor by name.

Each executor is one file implementing protocol.py:

  lanes.py       threads on this machine, each owning an Engine (the default)
  ray_actors.py  Ray actors on a cluster, each owning an Engine (--executor ray)

Either way a case's crash or hang is caught by the Engine's supervised child
and becomes that pair's CRASH or TIMEOUT Result, so the verdicts do not
depend on where a pair ran.
"""

from __future__ import annotations

from conformance import run_options as ro
from conformance.nightly.executors.protocol import Executor, ExecutorError, Unfinished

NAMES = ("lanes", "ray")
__all__ = ["NAMES", "Executor", "ExecutorError", "Unfinished", "start"]


def start(name: str, workers: int | None = None, address: str | None = None) -> Executor:
    """The executor `name` ("lanes" or "ray"), ready to run jobs: `workers` at once (default:
    this machine's CPUs for lanes, the cluster's for Ray); `address` is the Ray cluster's.

    Raises ExecutorError when it cannot (a Ray cluster that does not answer).
    """
    if name == "ray":
        from conformance.nightly.executors.ray_actors import RayExecutor

        return RayExecutor(workers, address)
    from conformance.nightly.executors.lanes import LanesExecutor

    return LanesExecutor(ro.lanes(workers))
