"""Backends with a planted bug in one ATen op that shows only from some size on, for the fuzz and reduce tests.

Each runs the case in eager, watching every ATen op it dispatches; the
broken op is the one named, and only where one of its tensor inputs has
a dim of at least `from_size` (a kernel bug of larger tiles, say). Eager
dispatch follows dynamic dims as they come, so dynamic programs run as
they should. Loaded as `--backend tests/fake_fuzz_backends.py:NAME`.
"""

from __future__ import annotations

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from conformance.backends.protocol import Backend, StageFailure
from conformance.taxonomy import Code


def _name(func) -> str:
    return f"{func.namespace}.{func._opname}"  # aten.cumsum.default -> aten.cumsum


def _has_dynamic_dims(case) -> bool:
    """Whether the case exports with a dynamic dim (a slot's program declares its dims in its file)."""
    return bool(case.exact.dynamic_dims()) if case.exact is not None else any(s.dynamic_dims for s in case.inputs)


class Watch(TorchDispatchMode):
    """Records the ATen ops run (and, with `shift`, moves the broken op's outputs)."""

    def __init__(self, broken: str, from_size: int, shift: float = 0.0):
        super().__init__()
        self.broken, self.from_size, self.shift = broken, from_size, shift
        self.hit = False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if _name(func) == self.broken and any(
            isinstance(t, torch.Tensor) and any(d >= self.from_size for d in t.shape) for t in tree_leaves((args, kwargs))
        ):
            self.hit = True
            if self.shift and isinstance(out, torch.Tensor) and out.dtype != torch.bool:
                out = out + (self.shift if out.is_floating_point() else 1)
        return out


class Planted(Backend):
    """Eager, but `op` is broken on inputs with a dim of `from_size` or more: it does not compile (`fails`), or its
    results are `shift` too high (integer results 1 too high); with `dynamic`, only in a case with dynamic dims."""

    stages = ("compile", "run")

    def __init__(self, name: str, op: str, from_size: int, *, fails: bool = False, shift: float = 0.0, dynamic: bool = False):
        self.name, self.op, self.from_size, self.fails, self.shift = name, op, from_size, fails, shift
        self.dynamic = dynamic

    def compile(self, _, case_run):
        if self.dynamic and not _has_dynamic_dims(case_run.case):
            return
        if self.fails:
            watch = Watch(self.op, self.from_size)
            with torch.no_grad(), watch:
                case_run.module(*[t.clone() for t in case_run.inputs[0]])
            if watch.hit:
                raise StageFailure(Code.UNSUPPORTED_OP, f"fakec cannot compile {self.op} with a dim of {self.from_size} or more",
                                   op=self.op)

    def run(self, _, inputs, case_run):
        with torch.no_grad(), Watch(self.op, self.from_size, self.shift):
            return case_run.module(*inputs)


CUMSUM_FAILS = Planted("cumsum-fails", "aten.cumsum", 3, fails=True)  # UNSUPPORTED_OP (aten.cumsum) from size 3
# UNSUPPORTED_OP (aten.cumsum) from size 3, only where the case has a dynamic dim
CUMSUM_FAILS_DYNAMIC = Planted("cumsum-fails-dynamic", "aten.cumsum", 3, fails=True, dynamic=True)
AMAX_OFF = Planted("amax-off", "aten.amax", 4, shift=0.5)  # NUMERIC_MISMATCH, amax 0.5 (integers: 1) too high from size 4


class Taint(TorchDispatchMode):
    """Marks the broken op's results; the first op that reads one raises, naming itself (a bad fold seen downstream)."""

    def __init__(self, broken: str, from_size: int):
        super().__init__()
        self.broken, self.from_size, self.tainted = broken, from_size, set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        leaves = [t for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
        if any(id(t) in self.tainted for t in leaves):
            raise StageFailure(Code.VERIFIER_ERROR, f"'{_name(func)}' op operand has the wrong shape", op=_name(func))
        out = func(*args, **(kwargs or {}))
        if _name(func) == self.broken and any(d >= self.from_size for t in leaves for d in t.shape):
            self.tainted.update(id(t) for t in tree_leaves(out) if isinstance(t, torch.Tensor))
        return out


class Downstream(Backend):
    """Eager, but `op` on inputs with a dim of `from_size` or more leaves a result that fails to compile where it is
    used next: the failure names the op reading it, or func.return when it is returned (where(c, a, a)'s fold)."""

    stages = ("compile", "run")

    def __init__(self, name: str, op: str, from_size: int):
        self.name, self.op, self.from_size = name, op, from_size

    def compile(self, _, case_run):
        taint = Taint(self.op, self.from_size)
        with torch.no_grad(), taint:
            out = case_run.module(*[t.clone() for t in case_run.inputs[0]])
        if any(id(t) in taint.tainted for t in tree_leaves(out) if isinstance(t, torch.Tensor)):
            raise StageFailure(Code.VERIFIER_ERROR, "'func.return' op operand has the wrong shape", op="func.return")

    def run(self, _, inputs, case_run):
        with torch.no_grad():
            return case_run.module(*inputs)


CUMSUM_DOWNSTREAM = Downstream("cumsum-downstream", "aten.cumsum", 3)  # VERIFIER_ERROR at cumsum's reader, from size 3
