"""Program surgery: every value a program computes, what no output needs cut away, a call turned into an input
(exact: eager's value there; in a program with dynamic dims, drawn with the value's dynamic dims).

Values are computed the way the case file computes them: each call's
template evaluated on its operands, so the activation an input takes over
from a cut call is bit for bit what that call gave in eager.
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from typing import Any

import torch

from conformance.cases.inputs import make_inputs
from conformance.programs import eager
from conformance.programs.program import Input, Program, with_exact


def inputs_of(program: Program) -> list[torch.Tensor]:
    """The program's first input set: its exact tensors, or what its case draws."""
    return input_sets(program)[0]


def input_sets(program: Program) -> list[list[torch.Tensor]]:
    """Every input set of the program: its exact tensors, or what its case draws (one set per size of its dynamic dims)."""
    if program.exact is not None:
        return [[t.clone() for t in program.exact[0]]]
    return make_inputs(eager.case_of(program), 0)


def values(program: Program, inputs: list[torch.Tensor]) -> list[Any]:
    """Every value: the inputs, then each call's result, as eager computed it then (a copy: a later
    in-place op, relu_ in a model, must not change what an input cut from it takes)."""
    live: list[Any] = list(inputs)
    found: list[Any] = [t.clone() for t in inputs]
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for call in program.calls:
            names = {f"a{i}": live[o] for i, o in enumerate(call.operands)}
            result = eval(call.template.format(*names), {"torch": torch}, names)
            live.append(result)
            found.append(result.clone() if isinstance(result, torch.Tensor) else result)
    return found


def prune(program: Program) -> Program:
    """Without the calls no output needs and the inputs no call uses (values renumbered; an output input stays)."""
    n = len(program.inputs)
    needed = set(program.outputs)
    for k in range(len(program.calls) - 1, -1, -1):
        if n + k in needed:
            needed.update(program.calls[k].operands)
    kept_inputs = [i for i in range(n) if i in needed]
    kept_calls = [k for k in range(len(program.calls)) if n + k in needed]
    number = {old: new for new, old in enumerate(kept_inputs)}
    number.update({n + old: len(kept_inputs) + new for new, old in enumerate(kept_calls)})
    calls = tuple(replace(program.calls[k], operands=tuple(number[o] for o in program.calls[k].operands)) for k in kept_calls)
    exact = None
    if program.exact is not None:
        exact = tuple(tuple(s[i] for i in kept_inputs) for s in program.exact)
    inputs = tuple(program.inputs[i] for i in kept_inputs)
    used = {d for i in inputs for d in i.shape if isinstance(d, str)}
    pruned = replace(program, inputs=inputs, calls=calls, outputs=tuple(number[o] for o in program.outputs),
                     symbols=tuple(s for s in program.symbols if s[0] in used))
    return replace(pruned, exact=exact) if exact is not None else pruned


def static(program: Program) -> Program:
    """The program at its first sizes, without dynamic dims (the same values as its first input set)."""
    if not program.symbols:
        return program
    first = {name: sizes[0] for name, sizes in program.symbols}
    inputs = tuple(replace(i, shape=tuple(first.get(d, d) if isinstance(d, str) else d for d in i.shape)) for i in program.inputs)
    return replace(program, inputs=inputs, symbols=())


def cut(program: Program, calls: set[int], found: list[Any]) -> Program | None:
    """The chosen calls' results become inputs (exact: eager's values there), those returned dropped from the
    outputs; None if one is not a tensor, or nothing would be returned.

    `found` is values(program, ...) of the static program's first input set.
    """
    n = len(program.inputs)
    inputs = list(found[:n])
    number: dict[int, int] = {i: i for i in range(n)}
    for k in sorted(calls):
        value = found[n + k]
        if not isinstance(value, torch.Tensor):
            return None
        number[n + k] = len(inputs)
        inputs.append(value)
    new_calls, outputs = _rewired(program, calls, number, len(inputs))
    if not outputs:
        return None
    shaped = replace(program, calls=new_calls, outputs=outputs)
    return prune(with_exact(replace(shaped, inputs=tuple(Input(()) for _ in inputs)), inputs))


def cut_dynamic(program: Program, calls: set[int], found: list[list[Any]]) -> Program | None:
    """cut() for a program with dynamic dims: the chosen calls' results become drawn inputs that keep the dynamic
    dims of the values they replace (an exact input is static, and the failure may need the dim). None where a
    result is no tensor or has a dim that follows no symbol (2 * n), or nothing would be returned.

    `found` is values(program, ...) of each of its input sets, one per size: a dim whose size moves with a
    symbol's sizes is that symbol.
    """
    n = len(program.inputs)
    symbols = {sizes: name for name, sizes in reversed(program.symbols)}  # (the first symbol of equal sizes)
    inputs = list(program.inputs)
    number: dict[int, int] = {i: i for i in range(n)}
    for k in sorted(calls):
        results = [values[n + k] for values in found]
        if len(results) < 2 or not all(isinstance(r, torch.Tensor) and r.dim() == results[0].dim() for r in results):
            return None
        shape: list[int | str] = []
        for d in range(results[0].dim()):
            sizes = tuple(r.shape[d] for r in results)
            if len(set(sizes)) == 1:
                shape.append(sizes[0])
            elif sizes in symbols:
                shape.append(symbols[sizes])
            else:
                return None
        values = drawn_values(results[0])
        if values is None:
            return None
        number[n + k] = len(inputs)
        inputs.append(Input(tuple(shape), str(results[0].dtype).removeprefix("torch."), values))
    new_calls, outputs = _rewired(program, calls, number, len(inputs))
    if not outputs:
        return None
    return prune(replace(program, inputs=tuple(inputs), calls=new_calls, outputs=outputs))


def _rewired(program: Program, calls: set[int], number: dict[int, int], inputs: int):
    """The calls not cut, numbered after the `inputs` inputs (`number` places those; it is completed), and the
    outputs left: a cut call's result returned would be an input returned as it is, so it goes with the call."""
    n = len(program.inputs)
    kept = [k for k in range(len(program.calls)) if k not in calls]
    for new, k in enumerate(kept):
        number[n + k] = inputs + new
    new_calls = tuple(replace(program.calls[k], operands=tuple(number[o] for o in program.calls[k].operands)) for k in kept)
    return new_calls, tuple(number[o] for o in program.outputs if o - n not in calls)


def bypass(program: Program, call: int, operand: int) -> Program:
    """Call `call`'s users take its operand `operand` (a value number) instead: the call goes."""
    n = len(program.inputs)
    victim = n + call

    def swap(o: int) -> int:
        return operand if o == victim else o

    calls = tuple(replace(c, operands=tuple(swap(o) for o in c.operands)) for c in program.calls)
    return prune(replace(program, calls=calls, outputs=tuple(dict.fromkeys(swap(o) for o in program.outputs))))


def only_output(program: Program, output: int) -> Program:
    return prune(replace(program, outputs=(output,)))


def drawn(program: Program) -> Program | None:
    """Exact inputs drawn instead (a constant tensor: full of it), so the case file needs no tensors beside it."""
    inputs = []
    for t in program.exact[0]:
        values = drawn_values(t)
        if values is None:
            return None
        inputs.append(Input(tuple(t.shape), str(t.dtype).removeprefix("torch."), values))
    return replace(program, inputs=tuple(inputs), exact=None, seed=0)


def drawn_values(t: torch.Tensor) -> tuple | None:
    """How to draw values like `t`'s (Input.values): full of its one value, or uniform over its kind's range; None
    for a dtype nothing draws."""
    if t.numel() and bool((t == t.reshape(-1)[0]).all()) and not t.is_complex():
        return ("full", t.reshape(-1)[0].item())
    if t.dtype == torch.bool:
        return ("uniform", None, None)
    if t.is_floating_point():
        return ("uniform", -4.0, 4.0)
    if t.dtype in (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8):
        return ("uniform", int(t.min()), int(t.max()) + 1) if t.numel() else ("uniform", 0, 1)
    return None
