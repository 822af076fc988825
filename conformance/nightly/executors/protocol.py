"""What every executor implements (one file each beside this one), and how it fails.

The contract the nightly relies on, whichever executor runs it:
- `run` hands each pair of its jobs to `sink` once, on the calling thread
  (the caller writes results.jsonl without locks), as results arrive;
- a case's crash or hang is that pair's Result (the Engine's supervised
  child), never the executor's failure;
- stopped from outside (KeyboardInterrupt) or left unable to finish
  (Unfinished), it keeps every Result it already delivered.
"""

from __future__ import annotations

from typing import Callable, Protocol

from conformance.execution.planning import Pair
from conformance.settings import Settings
from conformance.result import Result


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
