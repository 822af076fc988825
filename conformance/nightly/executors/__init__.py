"""Where a nightly's jobs run: the executor protocol, and `start` choosing one.

An executor takes the planned jobs (lists of (case, backend) pairs, heavy
ones first) and hands back a Result for every pair. Two implement it, one
file each:

  lanes.py       threads on this machine, each owning an Engine (the default)
  ray_actors.py  Ray actors on a cluster, each owning an Engine (--executor ray)

Either way a case's crash or hang is caught by the Engine's supervised child
and becomes that pair's CRASH or TIMEOUT Result, so the verdicts do not depend
on where a pair ran. The caller alone writes results.jsonl: `sink` is called
on the thread that called `run`.
"""

from __future__ import annotations

import os
from typing import Callable, Protocol

from conformance.execution.planning import Pair
from conformance.execution.settings import Settings
from conformance.result import Result

NAMES = ("lanes", "ray")


class ExecutorError(Exception):
    """The executor cannot start (no cluster at the address, too few CPUs): nothing has run."""


class Unfinished(Exception):
    """The executor lost the means to finish (every Ray actor gone): the results so far are delivered, the rest not run."""


class Executor(Protocol):
    workers: int  # how many jobs run at once

    def describe(self) -> str:
        """Where the jobs run, for the run's first line: "2 lanes", "4 Ray actors on 2 nodes"."""

    def run(self, jobs: list[list[Pair]], settings: Settings, sink: Callable[[Result], None]) -> dict:
        """Run `jobs` with `settings`; call `sink` once for each pair, on this thread, as results arrive.

        Returns figures of the run: {"peak_rss_mb": the largest supervised child, ...}.

        Raises KeyboardInterrupt (stopped from outside) or Unfinished with
        some pairs undelivered; every Result delivered before stays delivered.
        """

    def close(self) -> None:
        """Release what the executor holds (children, actors, the connection to a cluster). Idempotent."""


def start(name: str, workers: int | None = None, address: str | None = None) -> Executor:
    """The executor `name` ("lanes" or "ray"), ready to run jobs: `workers` at once (default:
    this machine's CPUs for lanes, the cluster's for Ray); `address` is the Ray cluster's.

    Raises ExecutorError when it cannot (a Ray cluster that does not answer).
    """
    if name == "ray":
        from conformance.nightly.executors.ray_actors import RayExecutor

        return RayExecutor(workers, address)
    from conformance.nightly.executors.lanes import LanesExecutor

    return LanesExecutor(workers or os.cpu_count() or 1)
