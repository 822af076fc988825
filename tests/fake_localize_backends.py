"""Backends with a planted bug in one op kind, for the localization tests.

Each exports the case as a normal backend would, then runs the exported
graph eagerly, op by op, except for one kind of op: its outputs are shifted
(a numeric bug), or compiling a graph that holds it fails or kills the
process. Loaded as `--backend tests/fake_localize_backends.py:NAME`.
"""

from __future__ import annotations

import ctypes

import torch
import torch.fx

from conformance.backends.protocol import Backend, StageFailure
from conformance.taxonomy import Code


def kind(n: torch.fx.Node) -> str:
    """`aten.relu_` for an `aten.relu_.default` node: the names the planted bugs key on."""
    return ".".join(str(n.target).split(".")[:2])


def nodes_of(module: torch.fx.GraphModule) -> list[torch.fx.Node]:
    """The call_function nodes of the graph and of the bodies of its higher-order ops (torch.no_grad() regions ...)."""
    return [n for m in module.modules() if isinstance(m, torch.fx.GraphModule) for n in m.graph.nodes if n.op == "call_function"]


def ops_of(module: torch.fx.GraphModule) -> set[str]:
    return {kind(n) for n in nodes_of(module)}


class Planted(Backend):
    """Eager on the exported graph, but `op` is broken: its outputs shifted by `shift` and scaled by `scale`
    (only those whose last dimension is `width`, when given: a kernel bug of one shape), or fatal to compile (`fails`;
    with `after`, only where an input of it is computed by that op: a fusion bug).
    Compile failures see inside higher-order ops' bodies; numeric ones do not (the Interpreter runs a body whole)."""

    stages = ("export", "compile", "run")

    def __init__(self, name: str, op: str, *, shift: float = 0.0, scale: float = 1.0, width: int | None = None, fails: str | None = None,
                 after: str | None = None):
        self.name, self.op, self.shift, self.scale, self.width, self.fails, self.after = name, op, shift, scale, width, fails, after

    def breaks(self, n: torch.fx.Node, value) -> bool:
        kind = ".".join(str(n.target).split(".")[:2])
        return (n.op == "call_function" and kind == self.op and isinstance(value, torch.Tensor)
                and (self.width is None or value.shape[-1] == self.width))

    def export(self, _, case_run):
        program = torch.export.export(case_run.module, tuple(case_run.inputs[0]), strict=case_run.export_mode == "strict")
        return program.module()

    def broken_in(self, module) -> bool:
        found = [n for n in nodes_of(module) if kind(n) == self.op]
        if self.after is None:
            return bool(found)
        return any(a.op == "call_function" and kind(a) == self.after for n in found for a in n.all_input_nodes)

    def compile(self, module, case_run):
        if self.broken_in(module):
            if self.fails == "crash":
                ctypes.string_at(0)  # SIGSEGV, as a compiler's null dereference does
            if self.fails == "error":
                raise StageFailure(Code.COMPILER_ERROR, f"fakec cannot compile fake.{self.op.split('.')[1]} ({self.op})", op=f"fake.{self.op.split('.')[1]}")
        return module

    def run(self, module, inputs, case_run):
        backend = self

        class Shifting(torch.fx.Interpreter):
            def run_node(self, n):
                value = super().run_node(n)
                return value * backend.scale + backend.shift if backend.breaks(n, value) else value

        with torch.no_grad():
            return Shifting(module).run(*inputs)


NUMERIC = Planted("planted-numeric", "aten.relu_", shift=1e-2)  # every ReLU's outputs 1e-2 too high
# The mlp's first linear (32 outputs) 9e-5 too large, relatively: within the model's tolerance (1e-4) where it
# is computed, beyond float32's (1.3e-6); the second linear sums 32 such errors and fails there.
DRIFT = Planted("planted-drift", "aten.linear", scale=1 + 9e-5, width=32)
CRASH = Planted("planted-crash", "aten.avg_pool2d", fails="crash")
COMPILE_ERROR = Planted("planted-compile-error", "aten.tanh", fails="error")
CLEAN = Planted("planted-none", "aten.none")  # no bug: every case passes
# Ops inside higher-order ops (tests/fixtures/localize: the decoder's torch.no_grad() and torch.autocast regions).
COS_ERROR = Planted("planted-cos-error", "aten.cos", fails="error")
TANH_ERROR = Planted("planted-tanh-error", "aten.tanh", fails="error")
# cos compiles alone, and sin does; cos of a sin does not.
COS_AFTER_SIN = Planted("planted-cos-after-sin", "aten.cos", fails="error", after="aten.sin")


def _tosa():
    from conformance.backends.loader import resolve

    return type(resolve("tosa"))


class TosaWithBrokenRelu(_tosa()):
    """The real `tosa` backend (torch-mlir's lowering, IREE's compiler and runtime), with one planted lowering bug:
    ReLU's `tosa.clamp` gets a lower bound of 0.01 instead of 0, so every ReLU output below 0.01 is 0.01."""

    name = "tosa-broken-relu"
    BROKEN = "min_val = 1.000000e-02 : f32"

    def flags(self):
        return {**super().flags(), "planted": self.BROKEN}

    def lower(self, contract, case_run):
        from torch_mlir import ir

        lowered = super().lower(contract, case_run)
        text = lowered.operation.get_asm(print_generic_op_form=True, large_elements_limit=None)
        # torch-mlir lowers aten.relu to tosa.clamp from 0 to the float maximum.
        text = text.replace("max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32", f"max_val = 3.40282347E+38 : f32, {self.BROKEN}")
        with lowered.context:
            module = ir.Module.parse(text)
        case_run.notes["planted_module"] = module  # owns the operation handed on
        return module.operation


TOSA_BROKEN_RELU = TosaWithBrokenRelu()
