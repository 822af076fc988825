"""The lanes executor: jobs on parallel lanes on this machine, each lane a supervised child.

Lanes are threads (they only wait on pipes); each owns an Engine, so a
crash or a hang costs one lane one child, never the run. Results are handed
to `sink` on the calling thread, in the order they finish. A lane gathers
the failures to re-run over its jobs (Engine.run's defer_reruns): a round
of re-runs costs a fresh child, so one round serves many jobs.
"""

from __future__ import annotations

import queue
import threading
import traceback
from typing import Callable

from conformance.execution.engine import Engine
from conformance.execution.planning import Pair
from conformance.settings import Settings
from conformance.result import Result

_DONE = object()


class LanesExecutor:
    def __init__(self, workers: int):
        self.workers = max(1, workers)

    def describe(self) -> str:
        return f"{self.workers} lanes"

    def close(self) -> None:
        pass  # each run's lanes close their children as they finish

    def run(self, jobs: list[list[Pair]], settings: Settings, sink: Callable[[Result], None]) -> dict:
        todo: queue.Queue = queue.Queue()
        for job in jobs:
            todo.put(job)
        finished: queue.Queue = queue.Queue()
        stats = {"peak_rss_mb": 0.0}
        stop = threading.Event()
        engines: list[Engine] = []

        def lane() -> None:
            engine = Engine(settings)
            engines.append(engine)
            try:
                while not stop.is_set():
                    try:
                        job = todo.get_nowait()
                    except queue.Empty:
                        break
                    for result in engine.run(job, defer_reruns=True):
                        finished.put(result)
                        if stop.is_set():
                            break
                if not stop.is_set():
                    for result in engine.rerun_waiting():
                        finished.put(result)
            except BaseException:  # a lane's own failure must not pass silently
                finished.put(RuntimeError(traceback.format_exc()))
            finally:
                stats["peak_rss_mb"] = max(stats["peak_rss_mb"], engine.peak_rss_mb)
                engine.drop_waiting()
                engine.close()
                finished.put(_DONE)

        lanes = [threading.Thread(target=lane, name=f"lane-{i}", daemon=True) for i in range(self.workers)]
        for t in lanes:
            t.start()
        alive = len(lanes)
        try:
            while alive:
                item = finished.get()
                if item is _DONE:
                    alive -= 1
                elif isinstance(item, Exception):
                    raise item
                else:
                    sink(item)
        finally:
            stop.set()
            for engine in engines:  # Ctrl-C: the children go now, not after their job
                engine.cancel()
            for t in lanes:
                t.join(timeout=30)
        return stats


def run_jobs(jobs: list[list[Pair]], settings: Settings, workers: int, sink: Callable[[Result], None]) -> dict:
    """Run every job on `workers` lanes; call `sink` for each Result; return lane statistics (peak RSS)."""
    return LanesExecutor(workers).run(jobs, settings, sink)
