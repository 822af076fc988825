"""Walking one backend's stages with a job's pairs.

The pairs go through the stages together: plain stages one pair at a time,
`@batched` stages in chunks of at most --max-batch (a chunk that fails is
split until the guilty pairs stand alone, so each gets its own verdict),
`@shared` stages (batched or not) computed once per case and reused by the
job's next backend that shares the chain of stages up to them (and handed
to a stage of another chain that builds on them: `shared`'s `given`). A backend
with a `cache_stage` meets the compile cache before its first stage and at
that stage (compile_cache_use.py). The `run` stage is run-and-compare's
(run_compare.py).
"""

from __future__ import annotations

import sys
import time
from typing import Any, Callable

from conformance.backends.protocol import Backend, BatchFailure
from conformance.classify import Classification, classify_error
from conformance.execution.capture import OutputCapture
from conformance.execution.compile_cache_use import CacheUse
from conformance.execution.emitter import Emitter
from conformance.execution.item import Item
from conformance.execution.reruns import REPLAYED

RunAndCompare = Callable[[Backend, Item], None]


class StageWalk:
    """A job's walk through its backends' stages; it keeps the outcomes of `@shared` stages for the next backend."""

    def __init__(
        self,
        backends_of: dict[str, list[Backend]],
        emitter: Emitter,
        capture: OutputCapture,
        cache: CacheUse | None,
        max_batch: int,
        run_and_compare: RunAndCompare,
    ):
        self.backends_of = backends_of  # case id -> the job's backends that run it
        self.emitter = emitter
        self.capture = capture
        self.cache = cache
        self.max_batch = max_batch
        self.run_and_compare = run_and_compare
        self.shared: dict[tuple, Any] = {}  # (case id, share chain) -> (outcome, extras the stage added)

    def walk(self, backend: Backend, items: list[Item]) -> None:
        """Walk the backend's stages with all of the job's pairs on it."""
        cache = self.cache if backend.cache_stage else None
        if cache:
            self._replay(backend, cache.resume(backend, items))
        for index, stage in enumerate(backend.stages):
            live = [it for it in items if not it.done and it.resume_at <= index]
            if cache and stage == backend.cache_stage:  # an IR already compiled (or refused) skips the compiler
                self._replay(backend, cache.compile(backend, live, lambda misses: self._stage(backend, index, stage, misses)))
            else:
                self._stage(backend, index, stage, live)
            if cache and stage == backend.export_stage:  # what torch.export made, for a night with a new torch-mlir
                cache.keep_exported(backend, live)

    def _replay(self, backend: Backend, replays: list[tuple]) -> None:
        for it, stage, failure in replays:
            it.run.extras[REPLAYED] = True  # stored once seen twice: not re-run
            self.emitter.fail(backend, it, stage, failure)

    def _stage(self, backend: Backend, index: int, stage: str, live: list[Item]) -> None:
        """Run one stage for `live`: as `run` and compare, in batches, or case by case."""
        if stage == "run":
            for it in live:
                self.run_and_compare(backend, it)
            return
        chain = backend.share_chain(index)
        fresh = [it for it in live if not self._reuse(backend, stage, it, chain)]
        given = backend.given_chain(stage)
        if given:
            for it in fresh:
                self._give(it, given)
        if backend.is_batched(stage):
            size = max(1, self.max_batch)
            for start in range(0, len(fresh), size):
                self._batched_stage(backend, stage, fresh[start : start + size], chain)
        else:
            for it in fresh:
                self._settle(backend, stage, it, self._run_single(backend, stage, it, chain))

    # -- shared across backends where the chain allows ------------------------------

    def _reuse(self, backend: Backend, stage: str, it: Item, chain: tuple | None) -> bool:
        """Give `it` the outcome a backend sharing this stage already had for its case; False if there is none."""
        if chain is None or (it.case_id, chain) not in self.shared:
            return False
        outcome, extras = self.shared[it.case_id, chain]
        it.timings[stage] = 0.0
        it.run.extras.update(extras)  # what the stage said about the case holds for every sharer
        self._settle(backend, stage, it, outcome)
        return True

    def _give(self, it: Item, given: tuple) -> None:
        """Start `it` from the value another frontend's stage (chain `given`) made for its case, if one did."""
        kept = self.shared.get((it.case_id, given))
        if kept is None or isinstance(kept[0], Classification):
            return  # none made it, or it failed: the stage makes it itself, failing as it did
        outcome, extras = kept
        it.value = outcome
        it.run.extras.update(extras)

    def _keep(self, it: Item, chain: tuple | None, outcome: Any, extras_before: dict) -> None:
        """Keep a shared stage's outcome (its value, or the Classification of its error) for the case's sharers."""
        if chain:
            added = {k: v for k, v in it.run.extras.items() if extras_before.get(k) is not v}
            self.shared[it.case_id, chain] = (outcome, added)

    def _sharers(self, backend: Backend, stage: str, case_ids: list[str], chain: tuple | None) -> list[str]:
        """The job's other backends that share this stage of these cases (a crash or hang here is theirs too)."""
        if chain is None:
            return []
        index = backend.stages.index(stage)
        return [
            other.name
            for other in dict.fromkeys(b for case_id in case_ids for b in self.backends_of.get(case_id, []))
            if other is not backend and other.stages[: index + 1] == backend.stages[: index + 1] and other.share_chain(index) == chain
        ]

    # -- one pair at a time ---------------------------------------------------------

    def _run_single(self, backend: Backend, stage: str, it: Item, chain: tuple | None) -> Any:
        """The stage's outcome for one pair (its value, or the Classification of its error), kept for sharers."""
        self.emitter.announce(stage, backend.name, [it.case_id], also=self._sharers(backend, stage, [it.case_id], chain))
        mark = self.capture.mark()
        before = dict(it.run.extras)
        start = time.perf_counter()
        try:
            outcome = backend.stage_method(stage)(it.value, it.run)
        except Exception as e:
            outcome = classify_error(stage, e, self.capture.since(mark))
        it.timings[stage] = time.perf_counter() - start
        self._keep(it, chain, outcome, before)
        return outcome

    def _settle(self, backend: Backend, stage: str, it: Item, outcome: Any) -> None:
        """The pair goes on with the stage's value, or fails with its Classification."""
        if isinstance(outcome, Classification):
            self.emitter.fail(backend, it, stage, outcome)
        else:
            it.value = outcome

    # -- in batches ----------------------------------------------------------------

    def _batched_stage(self, backend: Backend, stage: str, chunk: list[Item], chain: tuple | None) -> None:
        cases = [it.case_id for it in chunk]
        self.emitter.announce(stage, backend.name, cases, also=self._sharers(backend, stage, cases, chain))
        mark = self.capture.mark()
        before = [dict(it.run.extras) for it in chunk]
        start = time.perf_counter()
        try:
            values = backend.stage_method(stage)([it.value for it in chunk], [it.run for it in chunk])
            if len(values) != len(chunk):
                raise RuntimeError(f"batched stage {stage} returned {len(values)} values for {len(chunk)} cases")
        except Exception as e:
            error = e
        else:
            share = (time.perf_counter() - start) / len(chunk)
            for it, value, extras_before in zip(chunk, values, before):
                it.timings[stage] = it.timings.get(stage, 0.0) + share
                it.value = value
                self._keep(it, chain, value, extras_before)
            return
        spent = (time.perf_counter() - start) / len(chunk)
        for it in chunk:  # a failed attempt is compile time too
            it.timings[stage] = it.timings.get(stage, 0.0) + spent
        if len(chunk) == 1:
            cause = error.cause if isinstance(error, BatchFailure) else error
            failure = classify_error(stage, cause, self.capture.since(mark))
            self._keep(chunk[0], chain, failure, before[0])
            self.emitter.fail(backend, chunk[0], stage, failure)
            return
        groups = _regroup(chunk, error)
        # Said in the output: a batching problem must never hide as slowness.
        print(f"conformance: batch of {len(chunk)} failed at {stage} ({type(error).__name__}); running it as {[len(g) for g in groups]}", file=sys.stderr)
        # Each group runs again with a mark of its own, and outside the `except`
        # above: an error raised there would carry the batch's as its context,
        # and so every member's diagnostics into the details of one case.
        del error
        for group in groups:
            self._batched_stage(backend, stage, group, chain)


def _regroup(chunk: list[Item], error: Exception) -> list[list[Item]]:
    """How a failed chunk runs again: each guilty pair alone and the rest together, when the backend named them; else halves."""
    if isinstance(error, BatchFailure) and error.guilty and len(error.guilty) < len(chunk):
        guilty = [chunk[i] for i in error.guilty]
        return [[it] for it in guilty] + [[it for it in chunk if it not in guilty]]
    # Split until the guilty cases stand alone, so each gets its own verdict.
    half = len(chunk) // 2
    return [chunk[:half], chunk[half:]]
