"""The `run` stage: a compiled pair run on each of its input sets, and its outputs compared with eager's.

A backend's outputs may lead with the new values of inputs the program
updates in place (extras["mutations"]); those are split off and compared
with the inputs as eager left them. A pair compiled for a device this
machine lacks is COMPILED, neither pass nor failure. With
--check-determinism a pass keeps its outputs, and a re-run says how its own
differ (determinism.py).
"""

from __future__ import annotations

import time
from typing import Any

from torch.utils._pytree import tree_leaves

from conformance import result as results
from conformance.backends.protocol import Backend, CaseRun, NotRun
from conformance.cases.reference import clone_inputs, float64_outputs
from conformance.cases.spec import CaseUnavailable
from conformance.classify import Classification, classify_error
from conformance.classify.op_under_test import op_under_test
from conformance.compare import compare, precision
from conformance.compare.precision import Precision
from conformance.execution import determinism
from conformance.execution.capture import OutputCapture
from conformance.execution.emitter import Emitter
from conformance.execution.item import Item
from conformance.execution.reruns import DIFFERS, Attempt
from conformance.gates import timing
from conformance.gates.figures import RUN_STATS
from conformance.settings import Settings
from conformance.result import NUMERIC
from conformance.taxonomy import Code, Stage


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
            for inputs in it.run.inputs:
                outputs.append(backend.run(it.value, clone_inputs(inputs), it.run))
        except NotRun as e:  # compiled for a device this machine lacks: neither pass nor failure
            it.timings["run"] = time.perf_counter() - start
            it.done = True
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
        for index, (expected, actual) in enumerate(zip(it.run.expected, outputs)):
            mismatch = _mismatch(it.run, index, expected, actual)
            if mismatch:
                where = f"at input set {index + 1} of {len(outputs)} ({_sizes(it.run, index)}): " if len(outputs) > 1 else ""
                measured = _precision(it.run, index, mismatch)
                if measured is not None:
                    it.run.extras[NUMERIC] = measured.to_dict()
                said = where + mismatch.explanation + (f"; {measured.sentence()}" if measured else "")
                op = op_under_test(it.run.extras.get("aten_ops") or (), it.run.case.ops)
                it.timings[Stage.COMPARE] = time.perf_counter() - start
                self.emitter.fail(backend, it, Stage.COMPARE, Classification(mismatch.code, said, op=op))
                return False
        it.timings[Stage.COMPARE] = time.perf_counter() - start
        return True

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


def _mismatch(run: CaseRun, index: int, expected: Any, actual: Any):
    """How input set `index`'s outputs (then the inputs it updated in place) differ from eager's, or None."""
    case = run.case
    actual, mutated = split_mutations(actual, run.extras.get("mutations"))
    judged = dict(
        rtol=case.rtol, atol=case.atol, statistical=run.random,
        values=case.reference.values, reference=case.reference.label,
    )
    mismatch = compare(expected, actual, **judged)
    for input_index, value in mutated:
        if mismatch is None:
            mismatch = compare(run.inputs_after[index][input_index], value, label=f"input {input_index} (updated in place)", **judged)
            if mismatch is not None:
                mismatch.leaf = None  # an input, not an output: no float64 output to measure it against
    return mismatch


def _precision(run: CaseRun, index: int, mismatch) -> Precision | None:
    """A numeric mismatch of an output, measured against the program in float64: precision or a wrong answer."""
    if mismatch.code != Code.NUMERIC_MISMATCH or mismatch.leaf is None or run.random:
        return None
    oracle = float64_outputs(run.case, run.module, run.inputs[index])
    if oracle is None:
        return None
    leaves = tree_leaves(oracle)
    if mismatch.leaf >= len(leaves):
        return None
    return precision.judge(mismatch.expected, mismatch.actual, leaves[mismatch.leaf], run.case.rtol, run.case.atol)


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
