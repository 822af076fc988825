"""Running a job (some cases x some backends) inside the supervised child.

For each backend the cases go through its stages together; before every
stage the job announces which (cases, backend) it is about to run, so the
supervisor can blame the right pairs if the process dies or hangs. A job is
four parts, one module each:

    prepared_cases.py  each case made once: module, inputs, eager's reference
    stage_walk.py      a backend's stages: plain, `@batched`, `@shared`, cached
    run_compare.py     the `run` stage: run each input set, compare with eager
    emitter.py         what the parent hears: StageStarted, each pair's Result

The Executor lives as long as the child; each job is a RunningJob of its own.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from conformance.backends.protocol import Backend
from conformance.cases.registry import Registry
from conformance.execution.capture import OutputCapture
from conformance.execution.compile_cache_store import CompileCache
from conformance.execution.compile_cache_use import CacheUse
from conformance.execution.emitter import Emitter, Report
from conformance.execution.prepared_cases import PreparedCases
from conformance.execution.reruns import Attempt
from conformance.execution.run_compare import RunAndCompare
from conformance.execution.stage_walk import StageWalk
from conformance.settings import Settings


class Executor:
    """The child's side of a run, kept from job to job: registry, backends, output capture, compile cache.

    Each job gets a RunningJob of its own, so nothing of one job outlives it.
    """

    def __init__(self, registry: Registry, backends: dict[str, Backend], settings: Settings, report: Report):
        self.registry = registry
        self.backends = backends
        self.settings = settings
        self.report = report
        self.capture = OutputCapture()
        self.cache = (
            CacheUse(CompileCache(settings.cache_dir, settings.cache_limit_mb * 2**20), settings.options, bool(settings.artifacts))
            if settings.cache_dir
            else None
        )

    def run_job(self, pairs: list[tuple[str, str]], max_batch: int, attempt: Attempt | None = None) -> None:
        """Run every (case, backend) pair: backend by backend, cases together."""
        job = RunningJob(self, pairs, max_batch, attempt or Attempt())
        try:
            job.run()
        finally:
            job.close()
            if self.cache:
                self.cache.store.evict()


class RunningJob:
    """One job, from its first stage to its last Result.

    What its pairs share lives here and goes with it: each case's eager
    reference (computed once, for the first backend that needs it), the
    outcomes of `@shared` stages, and a scratch directory.
    """

    def __init__(self, executor: Executor, pairs: list[tuple[str, str]], max_batch: int, attempt: Attempt):
        self.backends = executor.backends
        # A re-run reads nothing from the cache: a stored failure or artifact must not decide it (reruns.py).
        cache = executor.cache.without_reads() if executor.cache and attempt.is_rerun else executor.cache
        self.cases_of: dict[str, list[str]] = {}  # backend name -> its cases, in the order of `pairs`
        backends_of: dict[str, list[Backend]] = {}  # case id -> its backends
        for case_id, backend in pairs:
            self.cases_of.setdefault(backend, []).append(case_id)
            backends_of.setdefault(case_id, []).append(self.backends[backend])
        self.scratch = Path(tempfile.mkdtemp(prefix="conformance-job-"))
        settings, capture = executor.settings, executor.capture
        emitter = Emitter(executor.report, capture, settings, attempt, cache)
        self.cases = PreparedCases(executor.registry, settings, capture, emitter, self.scratch)
        run_and_compare = RunAndCompare(emitter, capture, settings, attempt)
        self.walk = StageWalk(backends_of, emitter, capture, cache, max_batch, run_and_compare)

    def run(self) -> None:
        for name, case_ids in self.cases_of.items():
            backend = self.backends[name]
            self.walk.walk(backend, self.cases.items(backend, case_ids))

    def close(self) -> None:
        shutil.rmtree(self.scratch, ignore_errors=True)
