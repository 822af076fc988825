"""What a module computes, as a digest: every torch call it makes on given inputs, with their arguments.

The compile cache keys a case by what the case is. Exporting it to find out
costs more than a warm run's whole budget for a small case (0.05 s of CPU
each, more than doubling a warm run of op cases), so the key is taken from
one eager run under a TorchFunctionMode instead: the name of each torch
function, method or operator the module calls (F.linear, Tensor.__mul__,
torch.ops.aten.size, ...), its non-tensor arguments as they are (the 2 in
`x * 2`, a dim, a dtype), and its tensor arguments by where they come from:
an input, the result of an earlier call, or else (weights, buffers, a
constant read from a file) their bytes. That is the program torch.export
would trace from the same code on the same inputs; what it misses is code
that runs only while exporting (`torch.compiler.is_exporting()` branches).

Calls made inside a recorded call (a Python-implemented torch function's own
calls) are not recorded: the outer call and its arguments determine them.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

import torch
from torch.overrides import TorchFunctionMode, resolve_name
from torch.utils._pytree import tree_flatten

from conformance.digests import values_digest


ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


class _Recorder(TorchFunctionMode):
    def __init__(self, inputs: list[torch.Tensor]):
        super().__init__()
        self.hash = hashlib.sha256()
        self.names: dict[int, str] = {id(t): f"input{i}" for i, t in enumerate(inputs)}
        self.kept: list[Any] = list(inputs)  # every tensor named, alive, so no id() is reused while recording
        self.count = 0

    def _name(self, value: Any) -> str:
        if isinstance(value, torch.Tensor):
            known = self.names.get(id(value))
            if known is None:  # a weight, a buffer, a constant: it is what its bytes are
                known = self.names[id(value)] = f"tensor:{values_digest(value)}"
                self.kept.append(value)
            return known
        # An object's default repr holds its address, which changes from run to run.
        return f"{type(value).__name__}:{ADDRESS.sub('', repr(value))}"

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        leaves, spec = tree_flatten((args, kwargs))
        self.hash.update(f"{resolve_name(func) or getattr(func, '__qualname__', repr(func))}{spec}".encode())
        for leaf in leaves:
            self.hash.update(self._name(leaf).encode())
        result = func(*args, **kwargs)
        for leaf in tree_flatten(result)[0]:
            if isinstance(leaf, torch.Tensor) and id(leaf) not in self.names:
                self.names[id(leaf)] = f"result{self.count}"
                self.kept.append(leaf)
                self.count += 1
        self.hash.update(b"\0")
        return result


def trace_digest(module: torch.nn.Module, inputs: list[torch.Tensor], context) -> str:
    """The digest of `module(*inputs)`'s torch calls, run without grad inside `context` (the case's eager context)."""
    inputs = [t.clone() for t in inputs]  # an in-place case updates them
    recorder = _Recorder(inputs)
    with torch.no_grad(), context, recorder:
        module(*inputs)
    return recorder.hash.hexdigest()
