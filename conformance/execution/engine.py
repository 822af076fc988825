"""Producing Results for (case, backend) pairs, whatever the child does.

The engine hands jobs to a supervised child and yields Results as they
arrive. When the child dies or goes silent, the pairs it announced for the
stage in progress are to blame: a single case becomes CRASH or TIMEOUT at
that stage; a batch is split (halves after a crash; single cases after a
hang, so only the guilty one waits out the timeout again). Everything not
yet finished goes to a fresh child. No Result already received is lost.

A failure (and with --check-determinism a pass) is then run again in a
fresh child, alone; reruns.py decides which, and the verdict of the attempts.
"""

from __future__ import annotations

import dataclasses
import math
import shutil
import tempfile
from collections import deque
from dataclasses import dataclass, field
from typing import Iterator

from conformance import result as results
from conformance.bundles import finalize
from conformance.classify import classify_crash, classify_flood, classify_timeout
from conformance.execution.budgets import memory_allowed, waiting_time
from conformance.settings import Settings
from conformance.execution.capture import fold_repeats
from conformance.execution.messages import JobDone, Message, ResultMessage, RunJob, StageStarted
from conformance.execution.supervisor import STARTUP_TIMEOUT, ChildError, ChildProcess, Died, Flooding, Silent
from conformance.execution.zygote import Zygote, ZygoteGone, take_spare
from conformance.execution.planning import Pair
from conformance.execution.reruns import Attempt, agree, record, settle, wants_rerun
from conformance.result import ENDED_BY, RAN_AWAY, RUNAWAY, TOOL, Result

# A job whose child dies before announcing any stage is retried this often.
STARTUP_RETRIES = 2


@dataclass
class Job:
    pairs: list[Pair]
    max_batch: int
    attempts: int = 0  # how often a child died before announcing any stage of it
    attempt: Attempt = field(default_factory=Attempt)  # which run of its pairs this is (a re-run?)


@dataclass
class JobProgress:
    """What the parent knows of the job a child is running."""

    remaining: dict[Pair, None]  # pairs without a Result yet, in order
    announced: StageStarted | None = None  # the stage in progress: to blame if the child dies or hangs
    over: bool = False  # the child said JobDone


class Engine:
    def __init__(self, settings: Settings):
        self.settings = settings
        self.child: ChildProcess | None = None
        self.zygote: Zygote | None = None  # what children are forked from: started with the first
        self.peak_rss_mb = 0.0
        self.cancelled = False
        self.waiting: dict[Pair, list[Result]] = {}  # pairs held back for a re-run: their attempts so far
        self.outputs_dir: str | None = None  # --check-determinism: where attempt 1 keeps passing outputs
        self._backends: dict | None = None  # by name, resolved when a crash or hang needs its tool
        self.waited = settings.case_timeout  # how long the last silence was allowed to last (budgets.py)

    def run(self, pairs: list[Pair], max_batch: int | None = None, defer_reruns: bool = False) -> Iterator[Result]:
        """Results for `pairs`, in the order they finish, as one job, then its re-runs.

        Callers cut large runs into jobs first (planning.plan_jobs). A Result
        that may be re-run is held back until its attempts are over; a run
        cancelled meanwhile drops it (a resumed run runs the pair again).

        Each round of re-runs starts a fresh child (forked from the engine's
        zygote, zygote.py: no import again, but a process and its first
        job's set-up still). With `defer_reruns` the pairs to re-run
        wait, over jobs, until as many as a batch (--batch-size) have
        gathered, and run in one round; the caller ends with rerun_waiting()
        for the rest. The verdicts are the same, the fresh children fewer.
        """
        settings = self.settings
        if settings.check_determinism and self.outputs_dir is None:
            self.outputs_dir = tempfile.mkdtemp(prefix="conformance-outputs-")
        first = Attempt(1, self.outputs_dir)
        for result in self._attempt(list(pairs), max_batch or settings.batch_size, first):
            if wants_rerun(result, 1, settings.reruns, settings.check_determinism):
                self.waiting[result.key] = [result]
            else:
                yield result
        if not defer_reruns or len(self.waiting) >= settings.batch_size:
            yield from self.rerun_waiting()

    def rerun_waiting(self) -> Iterator[Result]:
        """Run the pairs waiting for a re-run (each alone, in a fresh child) and yield their settled Results."""
        settings = self.settings
        tried, self.waiting = self.waiting, {}  # the attempts of pairs that run again
        try:
            number = 2
            while tried and not self.cancelled:
                self._drop_child()  # a fresh child: nothing of the runs before lives on in it
                last = number > settings.reruns  # the cache may keep what this attempt confirms
                confirm = [[*key, r[0].code, r[0].op] for key, r in tried.items() if last and r[0].failed]
                for result in self._attempt(list(tried), 1, Attempt(number, self.outputs_dir, confirm)):
                    tried[result.key].append(result)
                for key, attempts in list(tried.items()):
                    latest = attempts[-1]
                    if len(attempts) < number or not agree(record(attempts[0]), record(latest)) or not wants_rerun(
                        latest, number, settings.reruns, False
                    ):
                        del tried[key]
                        yield settle(attempts)
                number += 1
        finally:
            self.drop_waiting()

    def drop_waiting(self) -> None:
        """Forget the pairs waiting for a re-run (a cancelled run: a resumed one runs them again)."""
        self.waiting = {}
        if self.outputs_dir:
            shutil.rmtree(self.outputs_dir, ignore_errors=True)
            self.outputs_dir = None

    def _attempt(self, pairs: list[Pair], max_batch: int, attempt: Attempt) -> Iterator[Result]:
        queue = deque([Job(pairs, max_batch, attempt=attempt)])
        while queue and not self.cancelled:
            yield from self._run_job(queue.popleft(), queue)

    def cancel(self) -> None:
        """Stop at once (from another thread): the child is killed, run() returns."""
        self.cancelled = True
        child = self.child
        if child is not None:
            child.kill()

    def close(self) -> None:
        """Let the child go, and the zygote it was forked from."""
        self._drop_child()
        if self.zygote is not None:
            self.zygote.close()
            self.zygote = None

    def _drop_child(self) -> None:
        """Let the child go: the next job gets a fresh one."""
        if self.child:
            self.child.close()
            self.child = None

    def _new_child(self) -> ChildProcess:
        """A fresh child, forked from the engine's zygote (zygote.py), which is started when there is none."""
        for _ in range(2):  # a zygote found dead is replaced once
            if self.zygote is None or not self.zygote.alive:
                self.zygote = take_spare(self.settings) or Zygote(self.settings, STARTUP_TIMEOUT)
            try:
                return ChildProcess(self.settings, zygote=self.zygote)
            except ZygoteGone:
                self.zygote.close()
                self.zygote = None
        raise ChildError("the process that forks the children died twice in a row")

    def _run_job(self, job: Job, queue: deque[Job]) -> Iterator[Result]:
        if self.child is None:
            self.child = self._new_child()
        child, settings = self.child, self.settings
        progress = JobProgress(dict.fromkeys(job.pairs))
        reply: Message | Silent | Died
        if not child.send(RunJob(job.pairs, job.max_batch, job.attempt)):
            reply = Died(child.exit_description())
        else:
            while True:
                pairs = progress.announced.pairs if progress.announced else []  # budgets.py
                self.waited = waiting_time(settings.budgets, pairs, settings.case_timeout)
                reply = child.receive(self.waited, memory_allowed(settings.memory_budgets, pairs, settings.memory_kill_mb))
                if not isinstance(reply, Message):
                    break
                handle = getattr(self, f"child_{reply.kind}", None)
                if handle is None:
                    raise ChildError(f"the child sent {reply} during a job (a bug in conformance)")
                yield from handle(progress, reply)
                if progress.over:
                    return
        if self.cancelled:
            return
        # The child died or hung.
        announced = progress.announced
        output = fold_repeats(child.log_since(announced.mark if announced else 0))
        if isinstance(reply, Silent):
            child.kill()
        child.close()
        self.child = None
        yield from self._blame(job, queue, progress.remaining, announced, reply, output)

    # -- what the child says during a job: one method per kind of message -------

    def child_stage(self, progress: JobProgress, message: StageStarted) -> Iterator[Result]:
        """A stage starts: until the next message, a death or a hang is these pairs' (see _blame)."""
        progress.announced = message
        return iter(())

    def child_result(self, progress: JobProgress, message: ResultMessage) -> Iterator[Result]:
        """A pair is finished: pass its Result on, once (a pair no longer expected is dropped)."""
        result = message.result
        if result.key in progress.remaining:
            del progress.remaining[result.key]
            yield result

    def child_done(self, progress: JobProgress, message: JobDone) -> Iterator[Result]:
        """The job is over: note the child's memory, replace it if it grew too large,
        and fail the pairs it never answered."""
        progress.over = True
        self.peak_rss_mb = max(self.peak_rss_mb, message.peak_rss_mb)
        if message.rss_mb > self.settings.memory_limit_mb:
            self._drop_child()  # a fresh child for the next job keeps memory bounded
        for case, backend in progress.remaining:  # never answered: a bug of ours, not a silent pass
            yield results.failed(
                case,
                backend,
                stage="case",
                code="UNKNOWN",
                explanation="the runner finished its job without a result for this case (a bug in conformance)",
            )

    # -- the child died or hung -------------------------------------------------

    def _blame(self, job, queue, remaining, announced: StageStarted | None, reply, output) -> Iterator[Result]:
        if announced is None:
            if job.attempts + 1 > STARTUP_RETRIES:
                for case, backend in remaining:
                    yield self._broken(case, backend, "case", reply, output)
                return
            queue.appendleft(dataclasses.replace(job, pairs=list(remaining), attempts=job.attempts + 1))
            return
        stage, backend = announced.stage, announced.backend
        blamed = [(c, backend) for c in announced.cases if (c, backend) in remaining]
        # A shared stage (one export for every torch-mlir backend) dies for all who share it.
        sharers = [(c, b) for c in announced.cases for b in announced.also if (c, b) in remaining]
        rest = [p for p in remaining if p not in blamed and p not in sharers]
        retry: list[Job] = []

        def with_sharers(part: list[Pair]) -> list[Pair]:  # a retried case takes its sharers along
            cases = {case for case, _ in part}
            return part + [pair for pair in sharers if pair[0] in cases]

        if len(blamed) == 1:
            for pair in blamed + sharers:
                yield self._broken(*pair, stage, reply, output)
        elif isinstance(reply, Silent):
            retry += [dataclasses.replace(job, pairs=with_sharers([p]), max_batch=1, attempts=0) for p in blamed]
        elif blamed:
            half = math.ceil(len(blamed) / 2)
            parts = (blamed[:half], blamed[half:])
            retry += [dataclasses.replace(job, pairs=with_sharers(part), max_batch=half, attempts=0) for part in parts]
        if rest:
            retry.append(dataclasses.replace(job, pairs=rest, attempts=0))
        queue.extendleft(reversed(retry))

    def _tool(self, backend_name: str, stage: str) -> str:
        """What ran `stage` for the backend named so (Backend.tool); the name itself if it cannot be resolved here."""
        if self._backends is None:
            from conformance.backends import loader

            self._backends = {}
            for spec in self.settings.backends:
                try:
                    backend = loader.resolve(spec)
                except loader.BackendError:
                    continue
                self._backends[backend.name] = backend
        backend = self._backends.get(backend_name)
        return backend.tool(stage) if backend else backend_name

    def _broken(self, case: str, backend: str, stage: str, reply, output: str) -> Result:
        if isinstance(reply, Flooding):
            found, ended_by = classify_flood(stage, reply.size, output), "flood"
        elif isinstance(reply, Silent):
            found, ended_by = classify_timeout(stage, self.waited, output), "silence"
        else:
            found = classify_crash(stage, reply.how, output, reply.measured)
            ended_by = RAN_AWAY if reply.how.startswith(RUNAWAY) else "killed" if "SIGKILL" in reply.how else "died"
        result = results.failed(
            case, backend, stage=stage, code=found.code, explanation=found.explanation, details=found.details
        )
        if ended_by == "silence":  # what the hang cost: the next run's ETA plans it so (nightly/eta.py)
            result.timings[stage] = self.waited
        result.extras[TOOL] = self._tool(backend, stage)
        result.extras[ENDED_BY] = ended_by
        if self.settings.artifacts:
            result.artifacts = str(finalize(self.settings, result))
        return result
