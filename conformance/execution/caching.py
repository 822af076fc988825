"""How the executor uses the compile cache, for backends that name a `cache_stage`.

    before_stages   a case key hit skips every stage up to `run` (or replays a
                    cached deterministic failure, re-classified by today's parsers)
    before_cache    an IR key hit skips the compile itself
    after_cache     a fresh artifact is stored under its IR key and case key
    on_failure      a failure before `run` is stored under the case key

Crashes and timeouts are never cached (they may not recur), nor are missing
tools or failures no parser recognises (a broken install looks like that: an
environment problem, not the case's, and it must not outlive its repair).
"""

from __future__ import annotations

import time

from conformance.classify import Classification, classify_text, parser_text
from conformance.execution.cache import CompileCache, case_fingerprint, digest, toolchain
from conformance.taxonomy import Code

NOT_CACHED = {Code.CRASH, Code.TIMEOUT, Code.TOOL_MISSING, Code.UNKNOWN}


class CacheSession:
    def __init__(self, cache: CompileCache, run_seed: int, options: dict):
        self.cache = cache
        self.run_seed = run_seed
        self.options = options

    def _case_key(self, backend, case) -> str:
        return digest(case_fingerprint(case, self.run_seed, self.options), backend.name, backend.flags(), toolchain())

    def before_stages(self, backend, items, fail) -> None:
        run_index = backend.stages.index("run")
        for it in items:
            it.case_key = self._case_key(backend, it.run.case)
            start = time.perf_counter()
            record = self.cache.case(it.case_key)
            if record is None:
                continue
            if "failure" in record:
                it.run.extras.update(record.get("extras", {}))
                it.timings["cache"] = time.perf_counter() - start
                fail(it, record["failure"]["stage"], _failure_from(record["failure"]))
                continue
            hit = self.cache.ir(record["ir_key"])
            if hit is None:
                continue  # the artifact was evicted or corrupt: rebuild it
            it.value = backend.cache_load(hit[0], hit[1], it.run)
            it.run.extras.update(record.get("extras", {}))
            it.resume_at = run_index
            it.timings["cache"] = time.perf_counter() - start

    def before_cache(self, backend, items) -> None:
        index = backend.stages.index(backend.cache_stage)
        for it in items:
            start = time.perf_counter()
            it.ir_key = digest(backend.cache_input(it.value, it.run), backend.name, backend.flags(), toolchain())
            hit = self.cache.ir(it.ir_key)
            if hit is not None:
                it.value = backend.cache_load(hit[0], hit[1], it.run)
                it.resume_at = index + 1
                self.cache.put_case(it.case_key, {"ir_key": it.ir_key, "extras": it.run.extras})
            it.timings["cache"] = it.timings.get("cache", 0.0) + time.perf_counter() - start

    def after_cache(self, backend, items) -> None:
        """`items` went through the cache stage just now; store what succeeded."""
        for it in items:
            if it.done:
                continue
            path, meta = backend.cache_store(it.value)
            blob = self.cache.put_blob(path)
            self.cache.put_ir(it.ir_key, blob, meta)
            self.cache.put_case(it.case_key, {"ir_key": it.ir_key, "extras": it.run.extras})

    def on_failure(self, backend, it, stage: str, failure: Classification) -> None:
        stages = backend.stages
        if failure.code in NOT_CACHED or stage not in stages or stages.index(stage) > stages.index(backend.cache_stage):
            return
        if getattr(it, "case_key", None) is None:
            return
        self.cache.put_case(
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
