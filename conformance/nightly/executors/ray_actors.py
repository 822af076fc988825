"""The Ray executor: jobs on Ray actors across a cluster, each actor owning an Engine.

    conformance nightly --executor ray [--address ADDR]

The driver (the `conformance nightly` process) plans the jobs as for lanes
and keeps every actor busy with one job at a time, heavy jobs first, each
pulled by the next actor to come free. An actor is a lane on some node: an
Engine whose supervised child stays warm between jobs (torch imported,
backends loaded), working in the driver's directory with the driver's
settings (so the compile cache is the path they name, which every node must
see).

What Ray does not do for this work, and how it is covered:
- Ray has no task timeout (ray#18916) and reports a segfault as "worker died
  unexpectedly" (ray#6103). So no case runs in Ray's worker: it runs in the
  Engine's supervised child, which turns a crash or a hang into CRASH or
  TIMEOUT at the stage it was in, exactly as on one machine.
- Ray's own retries are off (max_restarts=0, max_task_retries=0): a retried
  job could deliver a pair twice, and a hang would be waited out twice.
  Instead, when an actor or its node dies, the pairs of its job that have no
  Result yet are queued again, once (a job per case); lost a second time,
  each becomes a CRASH Result naming the lost nodes, so no pair goes missing
  silently.
- Results stream back one by one (the actor's `run` is a generator), and only
  the driver writes them, each pair at most once.
"""

from __future__ import annotations

import os
import socket
import sys
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

import ray
from ray.exceptions import RayError, RayTaskError

from conformance import result as results
from conformance.execution.engine import Engine
from conformance.execution.planning import Pair
from conformance.settings import Settings
from conformance.nightly.executors.protocol import ExecutorError, Unfinished
from conformance.result import Result

ACTOR_START_SECONDS = 600.0  # an actor imports the framework; a busy node may be slow
POLL_SECONDS = 1.0  # the driver looks up from Ray this often (Ctrl-C, SIGTERM)
CLOSE_SECONDS = 30.0


class EngineActor:
    """One lane on a Ray node: an Engine, its supervised child kept warm between jobs."""

    def __init__(self, settings: Settings, cwd: str):
        if os.path.isdir(cwd):  # relative --cases and backend paths mean what they mean to the driver
            os.chdir(cwd)
        self.engine = Engine(settings)

    def node(self) -> str:
        return ray.get_runtime_context().get_node_id()

    def run(self, pairs: list[Pair]):
        # A generator: Ray streams each Result to the driver as it is yielded.
        yield from self.engine.run(pairs)

    def peak_rss_mb(self) -> float:
        return self.engine.peak_rss_mb

    def close(self) -> None:
        self.engine.close()


@dataclass
class Lane:
    actor: Any  # a handle on an EngineActor
    node: str  # the Ray node id it runs on


@dataclass
class Job:
    pairs: list[Pair]
    lost_on: list[str] = field(default_factory=list)  # where it was lost before


@dataclass
class Running:
    lane: Lane
    job: Job
    remaining: dict[Pair, None]  # pairs without a Result yet


class RayExecutor:
    def __init__(self, workers: int | None = None, address: str | None = None):
        self.lanes: list[Lane] = []
        self.starting: dict[Any, tuple[Any, float]] = {}  # a replacement actor's node() call -> (actor, since)
        self.requeued = self.lost = 0
        # Without an address, a Ray instance of our own (Ray's own default would join any cluster
        # started on this machine); RAY_ADDRESS names a cluster as --address does.
        join = address or os.environ.get("RAY_ADDRESS")
        if join:
            check_answers(join)
        try:
            if join:  # a cluster's size is its own
                ray.init(address=join, include_dashboard=False, log_to_driver=False)
            else:  # a local instance is sized by -j
                ray.init(address="local", num_cpus=workers or os.cpu_count() or 1, include_dashboard=False, log_to_driver=False)
        except (ConnectionError, RuntimeError, ValueError) as e:
            raise ExecutorError(f"--address {join}: cannot join the Ray cluster ({first_line(e)})") from None
        self.address = join
        cpus = int(ray.cluster_resources().get("CPU", 0))
        self.nodes = sum(1 for n in ray.nodes() if n.get("Alive") and n.get("Resources", {}).get("CPU"))
        self.workers = workers or cpus
        if not 1 <= self.workers <= cpus:
            self.close()
            raise ExecutorError(f"-j {self.workers}: the Ray cluster has {cpus} CPUs, and each actor takes one")

    def describe(self) -> str:
        where = f"the Ray cluster at {self.address}" if self.address else "a Ray instance on this machine"
        return f"{self.workers} Ray actors on {where} ({self.nodes} node{'s' * (self.nodes != 1)})"

    def close(self) -> None:
        if ray.is_initialized():
            ray.shutdown()

    # -- running ------------------------------------------------------------------

    def run(self, jobs: list[list[Pair]], settings: Settings, sink: Callable[[Result], None]) -> dict:
        self.requeued = self.lost = 0
        queue = deque(Job(list(pairs)) for pairs in jobs)
        running: dict[Any, Running] = {}  # an actor's run() generator -> its job
        written: set[Pair] = set()

        def deliver(entry: Running, result: Result) -> None:
            if result.key not in entry.remaining:
                return  # not this job's, or already answered
            del entry.remaining[result.key]
            if result.key not in written:  # the one place results leave: each pair once
                written.add(result.key)
                sink(result)

        try:
            self._start_actors(settings)
            idle = deque(self.lanes)
            while queue or running:
                while idle and queue:
                    lane, job = idle.popleft(), queue.popleft()
                    running[lane.actor.run.remote(job.pairs)] = Running(lane, job, dict.fromkeys(job.pairs))
                if not running and not self.starting:
                    raise Unfinished(f"every Ray actor is gone: {sum(len(job.pairs) for job in queue)} pairs not run")
                ready, _ = ray.wait([*running, *self.starting], num_returns=1, timeout=POLL_SECONDS)
                for item in ready:
                    if item in self.starting:
                        self._started(item, idle)
                        continue
                    entry = running[item]
                    try:
                        result = ray.get(next(item))
                    except StopIteration:
                        del running[item]
                        idle.append(entry.lane)
                        for case, backend in list(entry.remaining):  # as the Engine does: never a silent pass
                            deliver(entry, results.failed(case, backend, stage="case", code="UNKNOWN",
                                                          explanation="the Ray actor finished its job without a result for this case (a bug in conformance)"))  # fmt: skip
                    except RayTaskError:
                        raise  # our code failed in the actor (a child that cannot start): stop, as a lane does
                    except RayError as e:
                        del running[item]
                        for lost in self._lost(entry, e, queue, settings):
                            deliver(entry, lost)
                    else:
                        deliver(entry, result)
                self._give_up_on_slow_starters()
            peak_rss_mb = self._peak_rss_mb()
        finally:
            self._stop_actors(graceful=not running)  # on Ctrl-C too: the actors (and so their children) go now
        return {"peak_rss_mb": peak_rss_mb, "requeued": self.requeued, "lost": self.lost}

    def _lost(self, entry: Running, error: RayError, queue: deque[Job], settings: Settings) -> list[Result]:
        """An actor died with a job: its unanswered pairs run again once, or (lost before) fail naming the nodes."""
        lane = entry.lane
        self.lanes.remove(lane)
        kill(lane.actor)  # with max_restarts=0 it stays dead; this makes sure of it
        alive = node_alive(lane.node)
        where = node_label(lane.node) + ("" if alive else ", node lost")
        if alive:  # its CPU is free again: a fresh actor takes it
            actor = self._new_actor(settings)
            self.starting[actor.node.remote()] = (actor, time.monotonic())
        pairs = list(entry.remaining)
        if not pairs:
            return []
        lost_on = [*entry.job.lost_on, where]
        if len(lost_on) == 1:
            # One job per pair: if a pair brought the actor down, a second loss blames that pair alone
            # (with one job per case, another backend's pair of the same case could die with it,
            # its result still in flight). Shared stages are redone per pair: only after a loss.
            self.requeued += len(pairs)
            queue.extendleft(Job([pair], lost_on) for pair in reversed(pairs))
            print(f"conformance: lost the Ray actor on {where} ({first_line(error)}); "
                  f"its {len(pairs)} unfinished pairs are re-queued", file=sys.stderr)  # fmt: skip
            return []
        self.lost += len(pairs)
        print(f"conformance: lost the Ray actor on {where} again; its {len(pairs)} unfinished pairs are reported as CRASH", file=sys.stderr)
        explanation = (f"the Ray actor running this pair was lost twice, on {' then on '.join(lost_on)}, "
                       f"so the pair has no verdict of its own ({first_line(error)})")  # fmt: skip
        return [results.failed(case, backend, stage="case", code="CRASH", explanation=explanation, details=str(error))
                for case, backend in pairs]  # fmt: skip

    # -- actors -------------------------------------------------------------------

    def _new_actor(self, settings: Settings):
        remote = ray.remote(EngineActor).options(num_cpus=1, max_restarts=0, max_task_retries=0, scheduling_strategy="SPREAD")
        return remote.remote(settings, os.getcwd())

    def _start_actors(self, settings: Settings) -> None:
        actors = [self._new_actor(settings) for _ in range(self.workers)]
        calls = {actor.node.remote(): actor for actor in actors}
        ready, late = ray.wait(list(calls), num_returns=len(calls), timeout=ACTOR_START_SECONDS)
        for ref in ready:
            try:
                self.lanes.append(Lane(calls[ref], ray.get(ref)))
            except RayError as e:
                print(f"conformance: a Ray actor did not start: {first_line(e)}", file=sys.stderr)
        for ref in late:
            kill(calls[ref])
        if not self.lanes:
            raise Unfinished(f"no Ray actor started within {ACTOR_START_SECONDS:g} s: nothing was run")

    def _started(self, ref, idle: deque[Lane]) -> None:
        actor, _ = self.starting.pop(ref)
        try:
            lane = Lane(actor, ray.get(ref))
        except RayError as e:
            print(f"conformance: a replacement Ray actor did not start: {first_line(e)}", file=sys.stderr)
            return
        self.lanes.append(lane)
        idle.append(lane)

    def _give_up_on_slow_starters(self) -> None:
        for ref, (actor, since) in list(self.starting.items()):
            if time.monotonic() - since > ACTOR_START_SECONDS:
                del self.starting[ref]
                kill(actor)

    def _peak_rss_mb(self) -> float:
        try:
            return max(ray.get([lane.actor.peak_rss_mb.remote() for lane in self.lanes], timeout=CLOSE_SECONDS), default=0.0)
        except RayError:
            return 0.0

    def _stop_actors(self, graceful: bool) -> None:
        """Kill every actor; `graceful`ly (no job running), its Engine closes first: the child leaves, its log is removed."""
        if graceful:
            try:
                ray.get([lane.actor.close.remote() for lane in self.lanes], timeout=CLOSE_SECONDS)
            except RayError:
                pass  # gone already: killing the actor takes its child too (PR_SET_PDEATHSIG)
        for actor in [lane.actor for lane in self.lanes] + [actor for actor, _ in self.starting.values()]:
            kill(actor)
        self.lanes, self.starting = [], {}


def check_answers(address: str) -> None:
    """A HOST:PORT nobody listens on stops here: ray.init would wait for it for many minutes."""
    host, colon, port = address.rpartition(":")
    if not colon or not port.isdigit() or "://" in address:
        return  # `auto` and other forms are Ray's to resolve
    try:
        socket.create_connection((host, int(port)), timeout=10).close()
    except OSError as e:
        raise ExecutorError(f"--address {address}: no Ray cluster answers there ({e.strerror or e})") from None


def kill(actor) -> None:
    try:
        ray.kill(actor)
    except (RayError, ValueError):
        pass  # already gone


def first_line(error: BaseException) -> str:
    lines = [line for line in str(error).splitlines() if line.strip()]
    return lines[0].strip() if lines else type(error).__name__


def _node_info(node: str) -> dict:
    return next((n for n in ray.nodes() if n["NodeID"] == node), {})


def node_alive(node: str) -> bool:
    return bool(_node_info(node).get("Alive"))


def node_label(node: str) -> str:
    """`node 7f041281 (10.0.0.5)`: the id Ray's own tools show, and where it ran."""
    return f"node {node[:8]} ({_node_info(node).get('NodeManagerAddress') or '?'})"
