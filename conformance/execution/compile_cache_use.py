"""How a run uses the compile cache, for backends that name a `cache_stage`.

Three points of a backend's walk through its stages meet the cache:

    resume          before any stage, each case is looked up by its case key:
                    a compiled artifact skips every stage up to `run`; a cached
                    deterministic failure is replayed (re-classified by today's parsers)
    compile         the cache stage itself: an IR already compiled (its IR key)
                    is loaded instead of compiled; fresh artifacts are stored
                    under their IR key and case key
    record_failure  a failure before `run` is stored under the case key

With --artifacts a run writes case keys but does not read them: a bundle
holds the IR entering the failing stage and that stage's replay, which only
the stages before the compiler produce, so every pair runs them as a cold
run would (the IR key still spares it the compiler). A reproducer from a
warm cache is then the one a cold run writes.

Crashes and timeouts are never cached (they may not recur), nor are missing
tools or failures no parser recognises (a broken install looks like that: an
environment problem, not the case's, and it must not outlive its repair).
The store itself, and what goes into the keys, is compile_cache_store.py.
"""

from __future__ import annotations

import time
from typing import Callable

from conformance.classify import Classification, classify_text, parser_text
from conformance.execution.compile_cache_store import CompileCache, case_fingerprint, digest, toolchain
from conformance.taxonomy import Code

NOT_CACHED = {Code.CRASH, Code.TIMEOUT, Code.TOOL_MISSING, Code.UNKNOWN}


class CacheUse:
    """One run's use of the store: its case keys mix in the run's seed and options.

    The items handed in are the executor's (case, backend) pairs: the cache
    reads and sets their `value`, `run`, `timings`, `resume_at`, `case_key`
    and `ir_key`.
    """

    def __init__(self, store: CompileCache, run_seed: int, options: dict, replay_cases: bool = True):
        self.store = store
        self.run_seed = run_seed
        self.options = options
        self.replay_cases = replay_cases  # False with --artifacts: case keys are written, never read

    def _case_key(self, backend, case) -> str:
        return digest(case_fingerprint(case, self.run_seed, self.options), backend.name, backend.flags(), toolchain())

    def resume(self, backend, items) -> list[tuple]:
        """Look `items` up by case key; a hit on an artifact skips them ahead to `run`.

        Returns the cached failures, (item, stage, failure), for the caller to report.
        """
        replays = []
        run_index = backend.stages.index("run")
        for it in items:
            it.case_key = self._case_key(backend, it.run.case)
            if not self.replay_cases:
                continue
            start = time.perf_counter()
            record = self.store.case(it.case_key)
            if record is None:
                continue
            if "failure" in record:
                it.run.extras.update(record.get("extras", {}))
                it.timings["cache"] = time.perf_counter() - start
                replays.append((it, record["failure"]["stage"], _failure_from(record["failure"])))
                continue
            hit = self.store.ir(record["ir_key"])
            if hit is None:
                continue  # the artifact was evicted or corrupt: rebuild it
            it.value = backend.cache_load(hit[0], hit[1], it.run)
            it.run.extras.update(record.get("extras", {}))
            it.resume_at = run_index
            it.timings["cache"] = time.perf_counter() - start
        return replays

    def compile(self, backend, items, run_stage: Callable[[list], None]) -> None:
        """Take `items` through the cache stage: `run_stage` runs it for those whose IR is not in the store."""
        index = backend.stages.index(backend.cache_stage)
        misses = []
        for it in items:
            start = time.perf_counter()
            it.ir_key = digest(backend.cache_input(it.value, it.run), backend.name, backend.flags(), toolchain())
            hit = self.store.ir(it.ir_key)
            if hit is not None:
                it.value = backend.cache_load(hit[0], hit[1], it.run)
                it.resume_at = index + 1
                self.store.put_case(it.case_key, {"ir_key": it.ir_key, "extras": it.run.extras})
            else:
                misses.append(it)
            it.timings["cache"] = it.timings.get("cache", 0.0) + time.perf_counter() - start
        run_stage(misses)
        for it in misses:
            if it.done:
                continue
            path, meta = backend.cache_store(it.value)
            blob = self.store.put_blob(path)
            self.store.put_ir(it.ir_key, blob, meta)
            self.store.put_case(it.case_key, {"ir_key": it.ir_key, "extras": it.run.extras})

    def record_failure(self, backend, it, stage: str, failure: Classification) -> None:
        """Store a deterministic failure at or before the cache stage under the case key."""
        stages = backend.stages
        if failure.code in NOT_CACHED or stage not in stages or stages.index(stage) > stages.index(backend.cache_stage):
            return
        if getattr(it, "case_key", None) is None:
            return
        self.store.put_case(
            it.case_key,
            {
                "failure": {
                    "stage": stage,
                    "code": str(failure.code),
                    "op": failure.op,
                    "explanation": failure.explanation,
                    "details": failure.details,
                    # Parser-made classifications are redone on reading: parsers improve.
                    "reclassify": failure.parsed,
                },
                "extras": it.run.extras,
            },
        )


def _failure_from(record: dict) -> Classification:
    if record.get("reclassify"):
        return classify_text(record["stage"], parser_text(record["details"]), record["details"])
    return Classification(record["code"], record["explanation"], record["op"], record["details"])
