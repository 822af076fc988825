"""Comparing a pair's outputs with eager's: the one code a run here and a run elsewhere judge with.

A backend's outputs may lead with the new values of inputs the program
updates in place (extras["mutations"]); those are split off and compared
with the inputs as eager left them. The first input set that differs
decides; a numeric mismatch is measured against the program in float64
(precision or a wrong answer) where the caller can run the program.
RunAndCompare (run_compare.py) judges from a CaseRun, remote_verdicts.py
from a bundle's remote.json: both build a Judging.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from torch.utils._pytree import tree_leaves

from conformance.backends.protocol import CaseRun
from conformance.cases.reference import float64_outputs
from conformance.classify import Classification
from conformance.classify.op_under_test import op_under_test
from conformance.compare import compare, precision
from conformance.compare.precision import Precision
from conformance.taxonomy import Code


@dataclass
class Judging:
    """What comparing a pair's outputs with eager's takes: from its CaseRun here, from its bundle's
    remote.json after a run elsewhere (remote_verdicts.py), so both judge alike."""

    expected: list  # eager's outputs, one per input set
    inputs_after: list  # the inputs as eager left them, one list per input set (in-place ops)
    mutations: list  # extras["mutations"]: which leading outputs are updated inputs
    rtol: float | None
    atol: float | None
    statistical: bool  # random outputs, judged as samples
    values: bool  # False: a stored random draw, judged on structure, dtype and shape only
    reference: str  # where `expected` comes from, as explanations name it
    sizes: list[str]  # each input set's dynamic sizes, for explanations
    aten_ops: list  # the ops the program calls (extras), to name the op under test
    ops: list  # the case's declared ops

    @classmethod
    def of(cls, run: CaseRun) -> Judging:
        case = run.case
        return cls(
            run.expected, run.inputs_after, run.extras.get("mutations") or [], case.rtol, case.atol, run.random,
            case.reference.values, case.reference.label, [input_set_sizes(run, i) for i in range(len(run.inputs))],
            list(run.extras.get("aten_ops") or ()), list(case.ops),
        )


Measure = Callable[[int, Any], "Precision | None"]


def compare_outputs(judging: Judging, outputs: list, measure: Measure) -> tuple[Classification, Precision | None] | None:
    """None when every input set's outputs match eager's; else the first mismatch's classification and,
    for a numeric one, how it measures against float64 (`measure(set index, mismatch)`)."""
    for index, (expected, actual) in enumerate(zip(judging.expected, outputs)):
        mismatch = _mismatch(judging, index, expected, actual)
        if mismatch:
            where = f"at input set {index + 1} of {len(outputs)} ({judging.sizes[index]}): " if len(outputs) > 1 else ""
            measured = measure(index, mismatch)
            said = where + mismatch.explanation + (f"; {measured.sentence()}" if measured else "")
            op = op_under_test(judging.aten_ops, judging.ops)
            return Classification(mismatch.code, said, op=op), measured
    return None


def _mismatch(judging: Judging, index: int, expected: Any, actual: Any):
    """How input set `index`'s outputs (then the inputs it updated in place) differ from eager's, or None."""
    actual, mutated = split_mutations(actual, judging.mutations)
    judged = dict(
        rtol=judging.rtol, atol=judging.atol, statistical=judging.statistical,
        values=judging.values, reference=judging.reference,
    )
    mismatch = compare(expected, actual, **judged)
    for input_index, value in mutated:
        if mismatch is None:
            mismatch = compare(judging.inputs_after[index][input_index], value, label=f"input {input_index} (updated in place)", **judged)
            if mismatch is not None:
                mismatch.leaf = None  # an input, not an output: no float64 output to measure it against
    return mismatch


def measure_precision(case, module, inputs: list, mismatch) -> Precision | None:
    """A numeric mismatch of an output, measured against the program in float64: precision or a wrong answer."""
    if mismatch.code != Code.NUMERIC_MISMATCH or mismatch.leaf is None:
        return None
    oracle = float64_outputs(case, module, inputs)
    if oracle is None:
        return None
    leaves = tree_leaves(oracle)
    if mismatch.leaf >= len(leaves):
        return None
    return precision.judge(mismatch.expected, mismatch.actual, leaves[mismatch.leaf], case.rtol, case.atol)


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


def input_set_sizes(run: CaseRun, index: int) -> str:
    """The dynamic dimensions' sizes of input set `index` ("n=3"), or "static"."""
    dims = {d.name: d.sizes[min(index, len(d.sizes) - 1)] for s in run.case.inputs for d in s.dynamic_dims.values()}
    return ", ".join(f"{k}={v}" for k, v in dims.items()) or "static"
