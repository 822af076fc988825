"""The `run` stage: a compiled pair run on each of its input sets, and its outputs compared with eager's.

The comparison itself is judging.py's (a run elsewhere is judged by it
too). A pair compiled for a device this machine lacks, or not run under
--compile-only, is COMPILED, neither pass nor failure: with --artifacts its
bundle holds what running it elsewhere needs (elsewhere.py). With
--check-determinism a pass keeps its outputs, and a re-run says how its own
differ (determinism.py).
"""

from __future__ import annotations

import time

from conformance import result as results
from conformance.backends.protocol import Backend, CaseRun, NotRun
from conformance.cases.reference import clone_inputs
from conformance.cases.spec import CaseUnavailable
from conformance.classify import classify_error
from conformance.compare.precision import Precision
from conformance.execution import determinism, elsewhere
from conformance.execution.judging import Judging, compare_outputs, measure_precision, split_mutations
from conformance.execution.capture import OutputCapture
from conformance.execution.emitter import Emitter
from conformance.execution.item import Item
from conformance.execution.reruns import DIFFERS, Attempt
from conformance.gates import timing
from conformance.gates.figures import RUN_STATS
from conformance.settings import Settings
from conformance.result import NUMERIC
from conformance.taxonomy import Stage


class RunAndCompare:
    """Runs a pair that reached `run` and emits its Result: passed, failed, compiled only, or skipped."""

    def __init__(self, emitter: Emitter, capture: OutputCapture, settings: Settings, attempt: Attempt):
        self.emitter = emitter
        self.capture = capture
        self.settings = settings
        self.attempt = attempt

    def __call__(self, backend: Backend, it: Item) -> None:
        outputs = self._run(backend, it)
        if outputs is None:
            return
        if self.settings.keep_outputs:  # for a caller that measures the outputs itself (localize)
            kept = [split_mutations(o, it.run.extras.get("mutations"))[0] for o in outputs]
            determinism.keep(self.settings.keep_outputs, it.case_id, backend.name, kept)
        if not self._compare(backend, it, outputs):
            return
        it.done = True
        self._check_determinism(backend, it, outputs)
        self._time_runs(backend, it)
        self.emitter.emit(results.passed(it.case_id, backend.name, it.timings), it.run.extras)

    def _run(self, backend: Backend, it: Item) -> list | None:
        """The outputs of each input set; None when the pair's Result is out already (not run here, skipped, failed)."""
        self.emitter.announce("run", backend.name, [it.case_id])
        mark = self.capture.mark()
        start = time.perf_counter()
        outputs = []
        try:
            if self.settings.compile_only and elsewhere.can_run_elsewhere(backend, it):
                raise NotRun(f"compiled for {backend.name}; not run here: --compile-only")
            for inputs in it.run.inputs:
                outputs.append(backend.run(it.value, clone_inputs(inputs), it.run))
        except NotRun as e:  # compiled for a device this machine lacks: neither pass nor failure
            it.timings["run"] = time.perf_counter() - start
            it.done = True
            elsewhere.stage(backend, it, str(e), self.settings)  # with --artifacts: what running it on another machine needs
            self.emitter.emit(results.compiled(it.case_id, backend.name, str(e), it.timings), it.run.extras)
            return None
        except Exception as e:
            it.timings["run"] = time.perf_counter() - start
            if isinstance(e, CaseUnavailable) and e.skip:
                # Compiled, but this runtime cannot run it (IREE's Python runtime has no int4 buffers).
                it.done = True
                skipped = results.skipped(it.case_id, backend.name, e.reason)
                skipped.timings = it.timings
                self.emitter.emit(skipped, it.run.extras)
                return None
            self.emitter.fail(backend, it, "run", classify_error("run", e, self.capture.since(mark)))
            return None
        it.timings["run"] = time.perf_counter() - start
        return outputs

    def _compare(self, backend: Backend, it: Item, outputs: list) -> bool:
        """Whether every input set's outputs match eager's; the first mismatch fails the pair."""
        self.emitter.announce(Stage.COMPARE, backend.name, [it.case_id])
        start = time.perf_counter()
        failure = compare_outputs(Judging.of(it.run), outputs, lambda index, mismatch: _precision(it.run, index, mismatch))
        it.timings[Stage.COMPARE] = time.perf_counter() - start
        if failure is None:
            return True
        classification, measured = failure
        if measured is not None:
            it.run.extras[NUMERIC] = measured.to_dict()
        self.emitter.fail(backend, it, Stage.COMPARE, classification)
        return False

    def _time_runs(self, backend: Backend, it: Item) -> None:
        """--gates: a gated pair's run timed again and again, the median in extras["run_stats"] (gates/timing.py)."""
        if not timing.timed(it.run.case, self.settings):
            return
        inputs = it.run.inputs[0]
        try:
            it.run.extras[RUN_STATS] = timing.time_calls(
                lambda copied: backend.run(it.value, copied, it.run), lambda: clone_inputs(inputs), self.settings.time_runs
            )
        except Exception as e:  # it passed once: a later call failing is no verdict of ours, but the time is unknown
            it.run.extras[RUN_STATS] = {"error": f"{type(e).__name__}: {e}"[:500]}

    def _check_determinism(self, backend: Backend, it: Item, outputs: list) -> None:
        """--check-determinism: the first run keeps a pass's outputs, a re-run says how its own differ."""
        kept = self.attempt.outputs_dir
        if kept is None or it.run.random:  # judged on statistics: other bits are expected
            return
        try:
            if not self.attempt.is_rerun:
                determinism.keep(kept, it.case_id, backend.name, outputs)
            elif differs := determinism.difference(kept, it.case_id, backend.name, outputs):
                it.run.extras[DIFFERS] = differs
        except Exception as e:  # outputs torch cannot save: say the check was not made, keep the verdict
            it.run.extras[determinism.UNCHECKED] = f"{type(e).__name__}: {e}"


def _precision(run: CaseRun, index: int, mismatch) -> Precision | None:
    if run.random:
        return None
    return measure_precision(run.case, run.module, run.inputs[index], mismatch)
