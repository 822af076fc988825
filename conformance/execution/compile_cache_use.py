"""How a run uses the compile cache, for backends that name a `cache_stage`.

Three points of a backend's walk through its stages meet the cache:

    resume          before any stage, each case is looked up by its case key:
                    a compiled artifact skips every stage up to `run`; a cached
                    deterministic failure is replayed (re-classified by today's parsers).
                    Else by its lowered key: the IR the frontend handed the
                    compiler skips every stage before the compiler (a night
                    with a new compiler exports nothing); a failure of the
                    frontend is replayed as above. Else by its exported key,
                    for a backend with an `export_stage`: what torch.export
                    made skips that stage (a night with a new torch-mlir
                    exports nothing), its failure is replayed
    export          after the export stage, what it made is stored under the exported key
    kept            a later stage's value made from that with torch alone (CaseRun.kept:
                    torch-mlir's backends keep the decomposed program), stored under the
                    exported key and what else it depends on (the decomposition table), and
                    read back instead of made: a night with a new torch-mlir that leaves
                    the table alone decomposes nothing. Never a failure: one is made again
    compile         the cache stage itself: each pair's input IR is stored under
                    its lowered key; an IR already compiled (its IR key) is loaded
                    instead of compiled, an IR the compiler refused for this case
                    (its IR key and what the case is) is refused again without
                    compiling; fresh artifacts are stored under their IR key and case key
    record_failure  a failure before `run` is stored under the case key (and one
                    before the compiler under the lowered key too, one of the
                    export stage under the exported key, the compiler's refusal
                    under the refused key); for one after it (a
                    wrong answer), the IR it was compiled from

With --artifacts a failing pair's bundle holds the IR entering the failing
stage and that stage's replay, as a cold run writes them. So a cached
failure is not replayed then: the pair runs its stages again (only failing
pairs do). A compiled artifact still skips ahead to `run`, with the IR it was
compiled from back in the pair's workdir when the pair failed after the
compiler before (record_failure kept it): its run replay recompiles that IR.
(A pair that passed when it was cached and fails now has none: its bundle
reruns it through pytest.)

With re-runs on (--reruns), a failure is stored only once a re-run has
reproduced it exactly, and a re-run reads no artifact and no failure
(reruns.py): a replayed failure was seen twice. It does read the lowered IR
its first run stored: a re-run redoes what may differ from one process to
the next, the compiler and the runtime, not the frontend's translation. Crashes and timeouts are never cached (they may not recur), nor are missing
tools or failures no parser recognises (a broken install looks like that: an
environment problem, not the case's, and it must not outlive its repair).
The store itself, and what goes into the keys, is compile_cache_store.py.
"""

from __future__ import annotations

import functools
import shutil
import sys
import time
import weakref
from typing import Callable

from conformance.cases.spec import Stored
from conformance.classify import Classification, classify_text, parser_text
from conformance.digests import values_digest
from conformance.execution.call_trace import trace_digest
from conformance.execution.compile_cache_store import (
    CompileCache,
    all_versions,
    case_fingerprint,
    compiler_versions,
    digest,
    export_versions,
    frontend_versions,
)
from conformance.taxonomy import Code

NOT_CACHED = {Code.CRASH, Code.TIMEOUT, Code.TOOL_MISSING, Code.UNKNOWN}
# The largest lowered IR kept under its lowered key: a model's IR, its weights printed, runs to hundreds
# of MB, and kept for every backend it would push compiled artifacts out of the bounded store.
LOWERED_LIMIT_BYTES = 64 * 2**20
CACHE_INPUT = "cache_input"  # CaseRun.notes: the file cache_input() wrote, the IR handed to the compiler


def compiler_refusal(backend, stage: str, code: str) -> bool:
    """The backend's compiler (its cache stage) refusing the IR with a diagnostic a parser read: it depends on
    the IR's bytes, the flags and the compiler's version, as the IR key says, and not on the process, so it
    is not re-run (reruns.py). A crash or a hang of the compiler is no refusal: those are re-run."""
    return backend.cache_stage is not None and stage == backend.cache_stage and code not in NOT_CACHED


def frontend_failure(backend, stage: str, code: str) -> bool:
    """A failure of the frontend's translation: a parsed cause in a stage before the backend's compiler
    (its cache stage), or before `run` for a backend that names none (tosa-custom: every stage before it
    translates the case). It depends on the case and the frontend's versions alone, as the lowered key says:
    stored at once (where there is a cache stage) and not re-run (reruns.py)."""
    stages = backend.stages
    translated_by = backend.cache_stage or "run"
    return (
        stage in stages
        and translated_by in stages
        and stages.index(stage) < stages.index(translated_by)
        and code not in NOT_CACHED
    )


class CacheUse:
    """One run's use of the store: its case keys mix in the run's backend options.

    The items handed in are the job's (case, backend) pairs (item.Item): the cache
    reads and sets their `value`, `run`, `timings`, `resume_at`, `case_key`
    and `ir_key`.
    """

    def __init__(self, store: CompileCache, options: dict, bundles: bool = False, reads: bool = True):
        self.store = store
        self.options = options
        self.bundles = bundles  # --artifacts: a failing pair's bundle needs its IR (see above)
        self.reads = reads  # False: look up no artifact and no failure, only lowered IR (a re-run, see reruns.py)
        # case id -> (its first input tensor, weakly; the digests of what it is): the backends of a
        # job share one CaseRun, digested once; the next job's tensors are new objects.
        self._known: dict[str, tuple[weakref.ref | None, str]] = {}
        self._exported: set[str] = set()  # exported keys this run stored

    def without_reads(self) -> CacheUse:
        return CacheUse(self.store, self.options, self.bundles, reads=False)

    def _fingerprint(self, case_run) -> str:
        first = next((t for inputs in case_run.inputs for t in inputs), None)
        known = self._known.get(case_run.case.id)
        if known and (known[0]() if known[0] is not None else None) is first:
            return known[1]
        try:
            program = trace_digest(case_run.module, case_run.inputs[0], case_run.case.eager())
        except Exception:  # a module eager cannot trace (the reference was stored): its source stands in
            program = None
        # Eager's outputs follow from the program and the inputs (and eager of a random op varies):
        # only a stored reference is data of its own.
        stored = case_run.expected if isinstance(case_run.case.reference, Stored) else None
        found = case_fingerprint(case_run, values_digest((case_run.inputs, stored)), program, self.options)
        self._known[case_run.case.id] = (weakref.ref(first) if first is not None else None, found)
        return found

    def _set_keys(self, backend, it) -> None:
        fingerprint = self._fingerprint(it.run)
        it.case_key = digest(fingerprint, backend.name, backend.flags(), all_versions(backend))
        it.lowered_key = digest(fingerprint, backend.name, backend.flags(), frontend_versions(backend))
        if backend.export_stage is not None:
            # Keyed by the stage's shared key, not the backend: every backend sharing torch.export shares its program.
            shared_as = backend.share_chain(backend.stages.index(backend.export_stage)) or backend.name
            it.exported_key = digest(fingerprint, shared_as, export_versions(backend))
            # (Not the Item itself: its CaseRun holding it back would keep every stage's value alive until a GC pass.)
            it.run.keeper = functools.partial(self._keep, it.exported_key, it.case_id, it.run.workdir)

    def resume(self, backend, items) -> list[tuple]:
        """Look `items` up by case key, then by lowered key: an artifact skips them ahead to `run`,
        a lowered IR to the cache stage.

        Returns the cached failures, (item, stage, failure), for the caller to report.
        """
        replays = []
        run_index = backend.stages.index("run")
        for it in items:
            start = time.perf_counter()
            self._set_keys(backend, it)
            record = self.store.case(it.case_key) if self.reads else None
            if record is None:
                self._resume_lowered(backend, it, replays)
                it.timings["cache"] = time.perf_counter() - start
                continue
            if "failure" in record:
                if self.bundles:
                    continue  # its stages run again: they write the bundle's IR and replay
                it.run.extras.update(record.get("extras", {}))
                it.timings["cache"] = time.perf_counter() - start
                replays.append((it, record["failure"]["stage"], _failure_from(record["failure"])))
                continue
            hit = self.store.ir(record["ir_key"])
            if hit is None:
                continue  # the artifact was evicted or corrupt: rebuild it
            it.value = backend.cache_load(hit[0], hit[1], it.run)
            it.run.extras.update(record.get("extras", {}))
            if self.bundles:
                self._restore_input(record, it.run)
            it.resume_at = run_index
            it.timings["cache"] = time.perf_counter() - start
        return replays

    def _resume_lowered(self, backend, it, replays: list) -> None:
        """A case-key miss: the lowered IR (or the frontend's failure) stored under the lowered key, if any."""
        record = self.store.lowered(it.lowered_key)
        value = self._kept(it, record, replays, "lowered IR", backend.cache_input_load)
        if value is _NONE:
            self._resume_exported(backend, it, replays)
            return
        if value is not _REPLAYED:
            it.value, it.lowered_from_cache = value, True
            it.resume_at = backend.stages.index(backend.cache_stage)

    def _resume_exported(self, backend, it, replays: list) -> None:
        """A lowered-key miss: what the export stage made (or its failure) stored under the exported key, if any."""
        if it.exported_key is None:
            return
        record = self.store.exported(it.exported_key)
        value = self._kept(it, record, replays, "exported program", backend.export_load)
        if value is not _NONE and value is not _REPLAYED:
            it.value, it.exported_from_cache = value, True
            it.resume_at = backend.stages.index(backend.export_stage) + 1

    def _kept(self, it, record: dict | None, replays: list, what: str, load: Callable):
        """The value a lowered or exported record keeps, loaded; _REPLAYED for a failure it replays; else _NONE."""
        if record is None:
            return _NONE
        if "failure" in record:
            if self.reads and not self.bundles:  # (a re-run replays no failure; a bundle needs the stages run)
                it.run.extras.update(record.get("extras", {}))
                replays.append((it, record["failure"]["stage"], _failure_from(record["failure"])))
                return _REPLAYED
            return _NONE
        blob = self.store.blob(record["blob"])
        if blob is None:
            return _NONE
        try:
            value = load(blob, it.run)
        except NotImplementedError:
            return _NONE
        except Exception as e:  # what a parser rejects may be rejected here too: the stages run again
            print(f"conformance: the {what} kept for {it.case_id} does not load ({type(e).__name__}); running its stages", file=sys.stderr)
            return _NONE
        it.run.extras.update(record.get("extras", {}))
        return value

    def _keep(self, exported_key: str, case_id: str, workdir, name: str, depends_on: str, make: Callable, save: Callable,
              load: Callable):  # fmt: skip
        """CaseRun.kept for one pair: its value read back from the store, else made and stored.
        (A re-run reads it too: like the lowered IR, it is the frontend's translation, made again alike.)"""
        key = digest(exported_key, name, depends_on)
        record = self.store.exported(key)
        blob = self.store.blob(record["blob"]) if record and "blob" in record else None
        if blob is not None:
            try:
                return load(blob)
            except Exception as e:  # made again, as a value never kept would be
                print(f"conformance: the {name} value kept for {case_id} does not load ({type(e).__name__}); making it again", file=sys.stderr)
        value = make()
        path = workdir / f"{name}.kept"
        try:
            save(value, path)
        except Exception:  # (a value that cannot be saved is made again next time)
            return value
        if path.stat().st_size <= LOWERED_LIMIT_BYTES:
            self.store.put_exported(key, {"blob": self.store.put_blob(path)})
        path.unlink(missing_ok=True)
        return value

    def keep_exported(self, backend, items) -> None:
        """Store what the export stage made for `items` under their exported keys (those it ran for)."""
        for it in items:
            if it.done or it.exported_key is None or it.exported_from_cache or it.exported_key in self._exported:
                continue
            self._exported.add(it.exported_key)  # (the job's next backend that shares the stage has the same)
            start = time.perf_counter()
            path = it.run.workdir / "exported.bin"
            try:
                backend.export_store(it.value, path)
            except Exception:  # (a program torch cannot serialize is exported again next time)
                continue
            if path.stat().st_size <= LOWERED_LIMIT_BYTES:
                self.store.put_exported(it.exported_key, {"blob": self.store.put_blob(path), "extras": dict(it.run.extras)})
            path.unlink(missing_ok=True)
            it.timings["cache"] = it.timings.get("cache", 0.0) + time.perf_counter() - start

    def compile(self, backend, items, run_stage: Callable[[list], None]) -> list[tuple]:
        """Take `items` through the cache stage: `run_stage` runs it for those whose IR is not in the store.

        Returns the compiler's refusals replayed from the store, (item, stage, failure), for the caller to report.
        """
        index = backend.stages.index(backend.cache_stage)
        misses, replays = [], []
        for it in items:
            start = time.perf_counter()
            source = it.run.notes[CACHE_INPUT] = backend.cache_input(it.value, it.run)
            # What the frontend made, for a re-run and for a night with a new compiler.
            if not it.lowered_from_cache and it.lowered_key is not None and source.stat().st_size <= LOWERED_LIMIT_BYTES:
                self.store.put_lowered(it.lowered_key, {"blob": self.store.put_blob(source), "extras": dict(it.run.extras)})
            it.ir_key = digest(source, backend.flags(), compiler_versions(backend))
            # A refusal's diagnostics quote the case (its locations, its file): kept for this case's IR, not any case's.
            it.refused_key = digest(it.ir_key, self._fingerprint(it.run))
            hit = self.store.ir(it.ir_key) if self.reads else None
            refused = self.store.refused(it.refused_key) if self.reads and hit is None and not self.bundles else None
            if hit is not None:
                it.value = backend.cache_load(hit[0], hit[1], it.run)
                it.resume_at = index + 1
                self.store.put_case(it.case_key, {"ir_key": it.ir_key, "extras": it.run.extras})
            elif refused is not None:  # a night with a new torch-mlir that lowers the case as before
                it.run.extras.update(refused.get("extras", {}))
                replays.append((it, refused["failure"]["stage"], _failure_from(refused["failure"])))
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
        return replays

    def record_failure(self, backend, it, stage: str, failure: Classification) -> None:
        """Store a deterministic failure at or before the cache stage under the case key;
        for one after it, keep the IR the pair was compiled from (see _keep_input)."""
        stages = backend.stages
        if failure.code in NOT_CACHED or getattr(it, "case_key", None) is None:
            return
        if stage not in stages or stages.index(stage) > stages.index(backend.cache_stage):  # run, compare
            self._keep_input(it)
            return
        record = {
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
        }
        self.store.put_case(it.case_key, record)
        if stages.index(stage) < stages.index(backend.cache_stage) and it.lowered_key is not None:  # the frontend's own failure
            self.store.put_lowered(it.lowered_key, record)
        if backend.export_stage == stage and it.exported_key is not None:  # torch.export's own
            self.store.put_exported(it.exported_key, record)
        if stage == backend.cache_stage and it.refused_key is not None:  # the compiler's refusal
            self.store.put_refused(it.refused_key, record)


    def _keep_input(self, it) -> None:
        """Add to the pair's case record the IR it was compiled from: a later run that finds the
        artifact by case key skips the stages that print it, and with --artifacts needs it."""
        source = it.run.notes.get(CACHE_INPUT)
        record = self.store.case(it.case_key) if source is not None else None
        if record is None or "ir_key" not in record or "input" in record:
            return
        record["input"] = {"blob": self.store.put_blob(source), "name": source.name}
        self.store.put_case(it.case_key, record)

    def _restore_input(self, record: dict, case_run) -> None:
        """The kept IR back in the pair's workdir, under the name and note its backend printed it to
        (write_ir_once's), so the run stage's replay finds it as on a cold run."""
        kept = record.get("input")
        blob = self.store.blob(kept["blob"]) if kept else None
        if blob is None:
            return
        path = case_run.workdir / kept["name"]
        shutil.copyfile(blob, path)
        case_run.notes[kept["name"]] = case_run.notes[CACHE_INPUT] = path


_NONE, _REPLAYED = object(), object()  # _kept's answers besides a value: nothing kept, a failure replayed


def _failure_from(record: dict) -> Classification:
    if record.get("reclassify"):
        return classify_text(record["stage"], parser_text(record["details"]), record["details"])
    return Classification(record["code"], record["explanation"], record["op"], record["details"])
