"""The one-step reductions of a program, by kind, each a smaller program to try.

    ops        chunks of calls cut away, the values they fed becoming exact inputs (eager's
               activations; drawn ones keeping their dynamic dims in a dynamic program), at
               every granularity from halves to single calls (ddmin's chunks)
    structure  one value returned (the calls after it gone); a call bypassed (its users take its operand of the same
               shape and dtype); static instead of dynamic dims
    shapes     a dim of an input to 1, halved or one less (alone, and in every input where it lines up
               for broadcasting), a size-1 dim dropped
    attributes an integer a call spells out (a dim, a size) set to 0
    dtypes     an input one step narrower: float64 -> float32, int64 -> int32 -> int16 -> int8
    values     an input all zeros, all ones, small integers; exact inputs drawn again

A step may not be valid (a reshape's sizes no longer fit): loop.py checks
each in eager first, and only what eager runs reaches the backend.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Callable

import torch

from conformance.programs.program import INTEGER, Input, Program
from conformance.reduce import edit

MAX_CHUNKS = 32  # the finest granularity at which a large program's calls are cut
NARROWER = {"float64": "float32", "int64": "int32", "int32": "int16", "int16": "int8"}  # float32 stays: f16 is another world of numerics
PLAIN_VALUES = (("full", 0), ("full", 1), ("ints", -2, 3))



@dataclass(frozen=True)
class Step:
    kind: str
    what: str  # what it did, for the log and the record
    program: Program


def structure(program: Program) -> list[Step]:
    steps = []
    n = len(program.inputs)
    # One value returned, the ops after it (and any only other outputs need) gone.
    for k, call in enumerate(program.calls):
        if (n + k,) != program.outputs:
            steps.append(Step("structure", f"only the result of call {k} ({call.op}) returned", edit.only_output(program, n + k)))
    if program.symbols:
        steps.append(Step("structure", "static dims", edit.static(program)))
    found = _values(program)
    if found is not None:
        for k, call in enumerate(program.calls):
            result = found[n + k]
            for o in dict.fromkeys(call.operands):
                if _alike(found[o], result):
                    steps.append(Step("structure", f"call {k} ({call.op}) bypassed", edit.bypass(program, k, o)))
    return steps


def ops(program: Program) -> list[Step]:
    """Chunks of calls cut into inputs: halves, quarters ... single calls (at most MAX_CHUNKS a granularity).

    A program with dynamic dims gets drawn inputs with the dims of the values cut (edit.cut_dynamic)."""
    calls = len(program.calls)
    if calls <= 1:
        return []
    if program.symbols:
        sets = _value_sets(program)
        cut = None if sets is None else (lambda chosen: edit.cut_dynamic(program, chosen, sets))
    else:
        found = _values(program)
        cut = None if found is None else (lambda chosen: edit.cut(program, chosen, found))
    if cut is None:
        return []
    steps, chunks, seen = [], 2, set()
    while True:
        size = math.ceil(calls / min(chunks, calls))
        for start in range(0, calls, size):
            chosen = frozenset(range(start, min(start + size, calls)))
            if chosen in seen or len(chosen) == calls:
                continue
            seen.add(chosen)
            reduced = cut(set(chosen))
            if reduced is not None:
                steps.append(Step("ops", f"calls {start}..{max(chosen)} cut", reduced))
        if size == 1 or chunks >= MAX_CHUNKS:
            break
        chunks *= 2
    return steps


def shapes(program: Program) -> list[Step]:
    steps = []
    for i, spec in enumerate(program.inputs):
        for d, size in enumerate(spec.shape):
            if isinstance(size, str):
                continue
            for new in dict.fromkeys((1, size // 2, size - 1)):
                if 1 <= new < size:
                    steps.append(Step("shapes", f"input {i} dim {d}: {size} -> {new}", _resized(program, {i: {d: new}})))
                    aligned = _aligned(program, i, d, size, new)
                    if len(aligned) > 1:
                        steps.append(Step("shapes", f"dim {d - len(spec.shape)} of every input: {size} -> {new}", _resized(program, aligned)))
            if size == 1:
                steps.append(Step("shapes", f"input {i} dim {d} dropped", _dropped(program, i, d)))
    return steps


def attributes(program: Program) -> list[Step]:
    """An integer a call spells out (a dim, a size, a bound) set to 0: `cumsum(x, dim=1)` -> `dim=0`, so a size-1
    dim it named can go next round. Program.size counts such integers last: 0 is the simplest."""
    steps = []
    for k, call in enumerate(program.calls):
        for match in INTEGER.finditer(call.template):
            if int(match.group()) != 0:
                template = call.template[: match.start()] + "0" + call.template[match.end() :]
                calls = program.calls[:k] + (replace(call, template=template),) + program.calls[k + 1 :]
                steps.append(Step("attributes", f"call {k} ({call.op}): {match.group()} -> 0", replace(program, calls=calls)))
    return steps


def dtypes(program: Program) -> list[Step]:
    steps = []
    for i, spec in enumerate(program.inputs):
        narrower = NARROWER.get(spec.dtype)
        if narrower:
            steps.append(Step("dtypes", f"input {i}: {spec.dtype} -> {narrower}", _cast(program, i, narrower)))
    return steps


def values(program: Program) -> list[Step]:
    steps = []
    if program.exact is not None:
        drawn = edit.drawn(program)
        if drawn is not None:
            steps.append(Step("values", "inputs drawn again", drawn))
    for i, spec in enumerate(program.inputs):
        for plain in PLAIN_VALUES:
            if spec.dtype == "bool" and plain[0] == "ints":
                continue
            steps.append(Step("values", f"input {i}: {_name(plain)}", _valued(program, i, plain)))
    return steps


# Big cuts first: a model's graph halves in a round, where bypassing takes a round a call.
KINDS: tuple[Callable[[Program], list[Step]], ...] = (ops, structure, shapes, attributes, dtypes, values)


# -- helpers ------------------------------------------------------------------------


def _values(program: Program) -> list | None:
    try:
        return edit.values(edit.static(program), edit.inputs_of(edit.static(program)))
    except Exception:
        return None


def _value_sets(program: Program) -> list[list] | None:
    """values() of every input set of a program with dynamic dims (one per size), or None where eager fails."""
    try:
        return [edit.values(program, inputs) for inputs in edit.input_sets(program)]
    except Exception:
        return None


def _alike(a, b) -> bool:
    return isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape and a.dtype == b.dtype


def _aligned(program: Program, i: int, d: int, size: int, new: int) -> dict[int, dict[int, int]]:
    """The same dim counted from the right, in every input where it has the same size: {input: {dim: new}}."""
    from_right = len(program.inputs[i].shape) - d
    found = {}
    for j, spec in enumerate(program.inputs):
        k = len(spec.shape) - from_right
        if 0 <= k < len(spec.shape) and spec.shape[k] == size:
            found[j] = {k: new}
    return found


def _resized(program: Program, changes: dict[int, dict[int, int]]) -> Program:
    if program.exact is not None:
        tensors = list(program.exact[0])
        for i, dims in changes.items():
            for d, new in dims.items():
                tensors[i] = tensors[i].narrow(d, 0, new).clone()
        return _exact(program, tensors)
    inputs = list(program.inputs)
    for i, dims in changes.items():
        inputs[i] = replace(inputs[i], shape=tuple(dims.get(d, s) for d, s in enumerate(inputs[i].shape)))
    return replace(program, inputs=tuple(inputs))


def _dropped(program: Program, i: int, d: int) -> Program:
    if program.exact is not None:
        tensors = list(program.exact[0])
        tensors[i] = tensors[i].squeeze(d).clone()
        return _exact(program, tensors)
    inputs = list(program.inputs)
    inputs[i] = replace(inputs[i], shape=inputs[i].shape[:d] + inputs[i].shape[d + 1 :])
    return replace(program, inputs=tuple(inputs))


def _cast(program: Program, i: int, dtype: str) -> Program:
    if program.exact is not None:
        tensors = list(program.exact[0])
        tensors[i] = tensors[i].to(getattr(torch, dtype))
        return _exact(program, tensors)
    inputs = list(program.inputs)
    inputs[i] = replace(inputs[i], dtype=dtype)
    return replace(program, inputs=tuple(inputs))


def _valued(program: Program, i: int, plain: tuple) -> Program:
    if program.exact is not None:
        tensors = list(program.exact[0])
        t = tensors[i]
        if plain[0] == "full":
            tensors[i] = torch.full_like(t, plain[1])
        else:
            generator = torch.Generator().manual_seed(0)
            tensors[i] = torch.randint(plain[1], plain[2], t.shape, generator=generator).to(t.dtype)
        return _exact(program, tensors)
    inputs = list(program.inputs)
    kind = plain[0]
    if kind == "ints" and not inputs[i].torch_dtype.is_floating_point:
        plain = ("uniform", plain[1], plain[2])
    inputs[i] = replace(inputs[i], values=plain)
    return replace(program, inputs=tuple(inputs))


def _exact(program: Program, tensors: list[torch.Tensor]) -> Program:
    return replace(program, inputs=tuple(Input(tuple(t.shape), str(t.dtype).removeprefix("torch."), ("exact",)) for t in tensors),
                   exact=(tuple(tensors),))


def _name(plain: tuple) -> str:
    return {("full", 0): "zeros", ("full", 1): "ones"}.get(plain, "small integers")
