"""Running a job (some cases x some backends) inside the supervised child.

For each backend the cases go through its stages together: plain stages one
case at a time, `@batched` stages in chunks, `@shared` stages computed once
per case and reused by the next backend that shares them. Before every stage
the job announces which (cases, backend) it is about to run, so the
supervisor can blame the right pairs if the process dies or hangs.

The Executor lives as long as the child; each job is a RunningJob of its own.
"""

from __future__ import annotations

import dataclasses
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from conformance import bundles
from conformance import result as results
from conformance.backends.protocol import Backend, BatchFailure, CaseRun, NotRun
from conformance.cases.inputs import make_inputs, make_module
from conformance.cases.reference import NondeterministicReference, clone_inputs, reference_outputs
from conformance.cases.registry import Registry
from conformance.cases.spec import CaseError, CaseUnavailable
from conformance.classify import Classification, classify_error
from conformance.compare import compare
from conformance.execution import determinism
from conformance.execution.capture import OutputCapture
from conformance.execution.compile_cache_store import CompileCache
from conformance.execution.compile_cache_use import CacheUse
from conformance.execution.messages import Message, ResultMessage, StageStarted
from conformance.execution.reruns import DIFFERS, REPLAYED, Attempt
from conformance.settings import Settings
from conformance.paths import safe_name
from conformance.taxonomy import Code, Stage

Report = Callable[[Message], None]  # sends a message to the parent


@dataclass
class Item:
    """One (case, backend) pair on its way through the backend's stages."""

    case_id: str
    run: CaseRun
    value: Any = None
    timings: dict[str, float] = field(default_factory=dict)
    done: bool = False
    resume_at: int = 0  # index of the next stage to run (a cache hit skips ahead)
    case_key: str | None = None  # compile-cache keys, when the backend caches
    ir_key: str | None = None


@dataclass
class CaseFailure:
    """The case itself failed (building it, or in eager) before any backend stage; or cannot run here (skip)."""

    stage: str
    failure: Classification
    skip: bool = False


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
        self.registry = executor.registry
        self.backends = executor.backends
        self.settings = executor.settings
        self.report = executor.report
        self.capture = executor.capture
        self.attempt = attempt
        # A re-run reads nothing from the cache: a stored failure or artifact must not decide it (reruns.py).
        self.cache = executor.cache.without_reads() if executor.cache and attempt.is_rerun else executor.cache
        self.max_batch = max_batch
        self.cases_of: dict[str, list[str]] = {}  # backend name -> its cases, in the order of `pairs`
        self.backends_of: dict[str, list[Backend]] = {}
        for case_id, backend in pairs:
            self.cases_of.setdefault(backend, []).append(case_id)
            self.backends_of.setdefault(case_id, []).append(self.backends[backend])
        self.prepared: dict[str, CaseRun | CaseFailure] = {}
        self.eager_time: dict[str, float] = {}
        self.shared: dict[tuple, Any] = {}
        self.scratch = Path(tempfile.mkdtemp(prefix="conformance-job-"))

    def run(self) -> None:
        for name, case_ids in self.cases_of.items():
            self._run_backend(self.backends[name], case_ids)

    def close(self) -> None:
        shutil.rmtree(self.scratch, ignore_errors=True)

    def _run_backend(self, backend: Backend, case_ids: list[str]) -> None:
        """Walk the backend's stages with all of the job's cases that apply to it."""
        items = self._items(backend, case_ids)
        cache = self.cache if backend.cache_stage else None
        if cache:
            for it, stage, failure in cache.resume(backend, items):
                it.run.extras[REPLAYED] = True  # stored once seen twice: not re-run
                self._fail(backend, it, stage, failure)
        for index, stage in enumerate(backend.stages):
            live = [it for it in items if not it.done and it.resume_at <= index]
            if cache and stage == backend.cache_stage:  # an IR already compiled skips the compiler
                cache.compile(backend, live, lambda misses: self._stage(backend, index, stage, misses))
            else:
                self._stage(backend, index, stage, live)

    def _stage(self, backend: Backend, index: int, stage: str, live: list[Item]) -> None:
        """Run one stage for `live`: as `run` and compare, in batches, or case by case."""
        if stage == "run":
            for it in live:
                self._run_and_compare(backend, it)
        elif backend.is_batched(stage):
            size = max(1, self.max_batch)
            for start in range(0, len(live), size):
                self._batched_stage(backend, stage, live[start : start + size])
        else:
            chain = backend.share_chain(index)
            for it in live:
                self._single_stage(backend, stage, it, chain)

    def _items(self, backend: Backend, case_ids: list[str]) -> list[Item]:
        """A pair per case that applies and whose eager reference exists; the others get their Result now."""
        items: list[Item] = []
        for case_id in case_ids:
            case = self.registry[case_id]
            reason = case.skip.get(backend.name) or backend.not_applicable(case)
            if reason:
                self._emit(results.skipped(case_id, backend.name, reason))
                continue
            prepared = self._prepare(case_id, backend.name)
            if isinstance(prepared, CaseFailure) and prepared.skip:
                self._emit(results.skipped(case_id, backend.name, prepared.failure.explanation))
                continue
            if isinstance(prepared, CaseFailure):
                self._emit_failure(case_id, backend.name, prepared.stage, prepared.failure, self._eager_timings(case_id))
                continue
            workdir = self.scratch / safe_name(case_id) / safe_name(backend.name)
            workdir.mkdir(parents=True, exist_ok=True)
            run = dataclasses.replace(prepared, workdir=workdir, notes={}, extras={}, staging=self._staging(case_id, backend.name))
            if run.staging is not None:
                bundles.stage_case_data(run.staging, run)
            items.append(Item(case_id, run, timings=self._eager_timings(case_id)))
        return items

    # -- the case itself: module, inputs, eager reference ---------------------

    def _prepare(self, case_id: str, backend_name: str) -> CaseRun | CaseFailure:
        if case_id in self.prepared:
            return self.prepared[case_id]
        case = self.registry[case_id]
        seed = self.settings.seed
        start = time.perf_counter()
        outcome: CaseRun | CaseFailure
        stage = Stage.CASE
        mark = self.capture.mark()
        try:
            self._announce(stage, backend_name, [case_id])
            module = make_module(case, seed)
            inputs = make_inputs(case, seed)
            stage = Stage.EAGER
            self._announce(stage, backend_name, [case_id])
            reference = reference_outputs(case, module, inputs)
            outcome = CaseRun(
                case, module, inputs, reference.expected, workdir=self.scratch, options=self.settings.options,
                inputs_after=reference.inputs_after, export_mode=case.export_mode or self.settings.export_mode,
            )
        except CaseUnavailable as e:
            outcome = CaseFailure(e.stage, Classification(Code.CASE_ERROR, e.reason, details=self.capture.since(mark)), skip=e.skip)
        except CaseError as e:  # exact inputs or stored outputs that break the case's own rules; the message names it
            outcome = CaseFailure(stage, Classification(Code.CASE_ERROR, str(e), details=self.capture.since(mark)))
        except NondeterministicReference as e:
            outcome = CaseFailure(
                stage,
                Classification(
                    Code.NONDETERMINISTIC_REFERENCE,
                    f"eager gives different results on two runs of the same inputs ({e}); "
                    "declare the case nondeterministic=True if that is intended",
                ),
            )
        except Exception as e:
            outcome = CaseFailure(stage, classify_error(stage, e, self.capture.since(mark)))
        self.eager_time[case_id] = time.perf_counter() - start
        self.prepared[case_id] = outcome
        return outcome

    def _eager_timings(self, case_id: str) -> dict[str, float]:
        # The reference is computed once per job; the first pair to need it pays.
        spent = self.eager_time.pop(case_id, 0.0)
        return {Stage.EAGER: spent} if spent else {}

    # -- stages ---------------------------------------------------------------

    def _single_stage(self, backend: Backend, stage: str, it: Item, chain: tuple | None) -> None:
        key = (it.case_id, chain) if chain else None
        if key in self.shared:
            outcome, extras = self.shared[key]
            it.timings[stage] = 0.0
            it.run.extras.update(extras)  # what the stage said about the case holds for every sharer
            if isinstance(outcome, Classification):
                self._fail(backend, it, stage, outcome)
            else:
                it.value = outcome
            return
        self._announce(stage, backend.name, [it.case_id], also=self._sharers(backend, stage, it.case_id, chain))
        mark = self.capture.mark()
        before = dict(it.run.extras)
        start = time.perf_counter()
        try:
            outcome = backend.stage_method(stage)(it.value, it.run)
        except Exception as e:
            outcome = classify_error(stage, e, self.capture.since(mark))
        it.timings[stage] = time.perf_counter() - start
        if key:
            added = {k: v for k, v in it.run.extras.items() if before.get(k) is not v}
            self.shared[key] = (outcome, added)
        if isinstance(outcome, Classification):
            self._fail(backend, it, stage, outcome)
        else:
            it.value = outcome

    def _batched_stage(self, backend: Backend, stage: str, chunk: list[Item]) -> None:
        self._announce(stage, backend.name, [it.case_id for it in chunk])
        mark = self.capture.mark()
        start = time.perf_counter()
        try:
            values = backend.stage_method(stage)([it.value for it in chunk], [it.run for it in chunk])
            if len(values) != len(chunk):
                raise RuntimeError(f"batched stage {stage} returned {len(values)} values for {len(chunk)} cases")
        except Exception as e:
            error = e
        else:
            share = (time.perf_counter() - start) / len(chunk)
            for it, value in zip(chunk, values):
                it.timings[stage] = it.timings.get(stage, 0.0) + share
                it.value = value
            return
        spent = (time.perf_counter() - start) / len(chunk)
        for it in chunk:  # a failed attempt is compile time too
            it.timings[stage] = it.timings.get(stage, 0.0) + spent
        if len(chunk) == 1:
            cause = error.cause if isinstance(error, BatchFailure) else error
            self._fail(backend, chunk[0], stage, classify_error(stage, cause, self.capture.since(mark)))
            return
        if isinstance(error, BatchFailure) and error.guilty and len(error.guilty) < len(chunk):
            guilty = [chunk[i] for i in error.guilty]
            groups = [[it] for it in guilty] + [[it for it in chunk if it not in guilty]]
        else:
            # Split until the guilty cases stand alone, so each gets its own verdict.
            half = len(chunk) // 2
            groups = [chunk[:half], chunk[half:]]
        # Said in the output: a batching problem must never hide as slowness.
        print(f"conformance: batch of {len(chunk)} failed at {stage} ({type(error).__name__}); running it as {[len(g) for g in groups]}", file=sys.stderr)
        # Each group runs again with a mark of its own, and outside the `except`
        # above: an error raised there would carry the batch's as its context,
        # and so every member's diagnostics into the details of one case.
        del error
        for group in groups:
            self._batched_stage(backend, stage, group)

    def _run_and_compare(self, backend: Backend, it: Item) -> None:
        case = it.run.case
        self._announce("run", backend.name, [it.case_id])
        mark = self.capture.mark()
        start = time.perf_counter()
        outputs = []
        try:
            for inputs in it.run.inputs:
                outputs.append(backend.run(it.value, clone_inputs(inputs), it.run))
        except NotRun as e:  # compiled for a device this machine lacks: neither pass nor failure
            it.timings["run"] = time.perf_counter() - start
            it.done = True
            self._emit(results.compiled(it.case_id, backend.name, str(e), it.timings), it.run.extras)
            return
        except Exception as e:
            it.timings["run"] = time.perf_counter() - start
            if isinstance(e, CaseUnavailable) and e.skip:
                # Compiled, but this runtime cannot run it (IREE's Python runtime has no int4 buffers).
                it.done = True
                skipped = results.skipped(it.case_id, backend.name, e.reason)
                skipped.timings = it.timings
                self._emit(skipped, it.run.extras)
                return
            self._fail(backend, it, "run", classify_error("run", e, self.capture.since(mark)))
            return
        it.timings["run"] = time.perf_counter() - start
        if self.settings.keep_outputs:  # for a caller that measures the outputs itself (localize)
            kept = [split_mutations(o, it.run.extras.get("mutations"))[0] for o in outputs]
            determinism.keep(self.settings.keep_outputs, it.case_id, backend.name, kept)

        self._announce(Stage.COMPARE, backend.name, [it.case_id])
        start = time.perf_counter()
        for index, (expected, actual) in enumerate(zip(it.run.expected, outputs)):
            actual, mutated = split_mutations(actual, it.run.extras.get("mutations"))
            judged = dict(
                rtol=case.rtol, atol=case.atol, statistical=case.nondeterministic,
                values=case.reference.values, reference=case.reference.label,
            )
            mismatch = compare(expected, actual, **judged)
            for input_index, value in mutated:
                if mismatch is None:
                    mismatch = compare(
                        it.run.inputs_after[index][input_index], value, label=f"input {input_index} (updated in place)", **judged,
                    )
            if mismatch:
                it.timings[Stage.COMPARE] = time.perf_counter() - start
                where = f"at input set {index + 1} of {len(outputs)} ({_sizes(it.run, index)}): " if len(outputs) > 1 else ""
                self._fail(backend, it, Stage.COMPARE, Classification(mismatch.code, where + mismatch.explanation))
                return
        it.timings[Stage.COMPARE] = time.perf_counter() - start
        it.done = True
        self._check_determinism(backend, it, outputs)
        self._emit(results.passed(it.case_id, backend.name, it.timings), it.run.extras)

    def _check_determinism(self, backend: Backend, it: Item, outputs: list) -> None:
        """--check-determinism: the first run keeps a pass's outputs, a re-run says how its own differ."""
        kept = self.attempt.outputs_dir
        if kept is None or it.run.case.nondeterministic:  # judged on statistics: other bits are expected
            return
        try:
            if not self.attempt.is_rerun:
                determinism.keep(kept, it.case_id, backend.name, outputs)
            elif differs := determinism.difference(kept, it.case_id, backend.name, outputs):
                it.run.extras[DIFFERS] = differs
        except Exception as e:  # outputs torch cannot save: say the check was not made, keep the verdict
            it.run.extras[determinism.UNCHECKED] = f"{type(e).__name__}: {e}"

    # -- reporting ------------------------------------------------------------

    def _announce(self, stage: str, backend: str, case_ids: list[str], also: list[str] = ()) -> None:
        """Tell the supervisor what runs now; `also`: backends that will reuse this (shared) stage's outcome."""
        self.report(StageStarted(str(stage), backend, case_ids, self.capture.mark(), list(also)))

    def _sharers(self, backend: Backend, stage: str, case_id: str, chain: tuple | None) -> list[str]:
        """The job's other backends that share this stage of this case (a crash or hang here is theirs too)."""
        if chain is None:
            return []
        index = backend.stages.index(stage)
        return [
            other.name
            for other in self.backends_of.get(case_id, [])
            if other is not backend and other.stages[: index + 1] == backend.stages[: index + 1] and other.share_chain(index) == chain
        ]

    def _fail(self, backend: Backend, it: Item, stage: str, failure: Classification) -> None:
        it.done = True
        deterministic = self.attempt.records_failure(it.case_id, backend.name, failure.code, failure.op, self.settings.reruns)
        if self.cache and backend.cache_stage and deterministic:
            self.cache.record_failure(backend, it, stage, failure)
        self._emit_failure(it.case_id, backend.name, stage, failure, it.timings, it.run.extras)

    def _emit_failure(self, case_id, backend_name, stage, failure: Classification, timings, extras=None) -> None:
        self._emit(
            results.failed(
                case_id,
                backend_name,
                stage=str(stage),
                code=str(failure.code),
                op=failure.op,
                explanation=failure.explanation,
                details=failure.details,
                timings=timings,
            ),
            extras,
        )

    def _staging(self, case_id: str, backend: str) -> Path | None:
        if not self.settings.artifacts:
            return None
        staging = bundles.staging_dir(self.settings.artifacts, case_id, backend)
        staging.mkdir(parents=True, exist_ok=True)
        return staging

    def _emit(self, result: results.Result, extras: dict | None = None) -> None:
        result.extras = dict(extras or {})
        if self.settings.artifacts:
            bundle = bundles.finalize(self.settings, result)
            result.artifacts = str(bundle) if bundle else None
        self.report(ResultMessage(result))


def split_mutations(outputs: Any, mutations: list | None) -> tuple[Any, list[tuple[int, Any]]]:
    """(the user's outputs, [(input index, new value)]) from outputs led by mutated state.

    A backend whose outputs start with the new values of mutated inputs (and
    buffers) says so in extras["mutations"]: one entry per leading output,
    the input's index, or None for a buffer (not compared).
    """
    if not mutations:
        return outputs, []
    flat = list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]
    count = len(mutations)
    rest = flat[count:]
    mutated = [(index, value) for index, value in zip(mutations, flat[:count]) if index is not None]
    return (rest[0] if len(rest) == 1 else tuple(rest)), mutated


def _sizes(run: CaseRun, index: int) -> str:
    dims = {d.name: d.sizes[min(index, len(d.sizes) - 1)] for s in run.case.inputs for d in s.dynamic_dims.values()}
    return ", ".join(f"{k}={v}" for k, v in dims.items()) or "static"
