"""A program judged here, in the parent, before any backend sees it: does eager run it, finitely, and well conditioned?

It is built from its own case file (the text the child runs), with the
inputs the case draws, so what is checked here is what runs there.

Well conditioned: eager's float32 outputs are within a small share of the
case's tolerance of the same program computed in float64. A program whose
eager result already sits near its tolerance (cancellation, an integer
cast of a rounded value, a comparison of nearly equal floats) would make
any backend that rounds otherwise look wrong: a false failure. The
localizer's oracle (localize/oracle.py) measures the error.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import torch
from torch.utils._pytree import tree_leaves

from conformance.cases.inputs import make_inputs, make_module
from conformance.cases.spec import Case, Exact, op
from conformance.localize.oracle import error
from conformance.programs import program as programs

# Eager may be off from float64 by at most this share of the tolerance.
CONDITIONING = 0.1


@dataclass
class Evaluation:
    case: Case
    inputs: list[list[torch.Tensor]]  # per input set
    outputs: list[Any]  # eager's, per input set
    error: str | None = None  # why eager could not run it

    @property
    def finite(self) -> bool:
        return all(bool(t.isfinite().all()) for t in _float_leaves(self.outputs))


def _float_leaves(value: Any) -> list[torch.Tensor]:
    return [t for t in tree_leaves(value) if isinstance(t, torch.Tensor) and (t.is_floating_point() or t.is_complex())]


def case_of(program: programs.Program, path=None) -> Case:
    """The case the program's file declares: read from `path`, or built from its text (exact inputs: given as they are)."""
    if path is not None:
        return programs.load(path)
    namespace: dict[str, Any] = {"__name__": "conformance_program", "torch": torch}
    if program.exact is not None:
        exec(compile(programs.function_source(program), "<program>", "exec"), namespace)
        return op("program.check", namespace["program"], Exact.tensors(*program.exact[0]), ops=program.ops,
                  rtol=program.rtol, atol=program.atol)
    exec(compile(programs.source(program, "program.check", "A program checked in eager."), "<program>", "exec"), namespace)
    return namespace["CASES"][0]


def evaluate(program: programs.Program, path=None) -> Evaluation:
    """Eager's outputs for every input set of the program's case; `error` says why there are none."""
    case = case_of(program, path)
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            inputs = make_inputs(case, 0)
            module = make_module(case, 0)
            outputs = [module(*[t.clone() for t in one]) for one in inputs]
    except Exception as e:
        return Evaluation(case, [], [], f"{type(e).__name__}: {e}")
    return Evaluation(case, inputs, outputs)


def conditioning(evaluation: Evaluation) -> float:
    """Eager's largest error against float64, in units of the case's tolerance (0 when exact)."""
    case = evaluation.case
    module = make_module(case, 0)
    worst = 0.0
    for inputs, outputs in zip(evaluation.inputs, evaluation.outputs):
        wide = [t.double() if t.is_floating_point() else t.clone() for t in inputs]
        try:
            with torch.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                oracle = module(*wide)
        except Exception:
            return float("inf")  # runs in float32 only: no oracle to trust it by
        rtol, atol = (case.rtol, case.atol) if case.rtol is not None else (None, None)
        _, ratio, _ = error(outputs, oracle, rtol, atol)
        worst = max(worst, ratio)
    return worst
