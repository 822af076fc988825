"""One op of a model as a case declaration of its own: a small file in the project's case format.

The op keeps its attributes (every non-tensor argument, written out as a
literal) and takes eager's activations at that point of the model as exact
inputs, saved beside the file. Where the op needs its context in the model
to fail, the file computes a fragment instead: the op before it first, or
a buffer of the model kept a constant of the program rather than an input. `--cases DIR` runs it like any hand-written
case, so a localized failure becomes a regression case a compiler engineer
can hand to a tool.
"""

from __future__ import annotations

import math
import operator
from pathlib import Path
from typing import Any, Callable, Sequence

import torch
import torch.fx

from conformance import dtypes
from conformance.localize.graph import OpNode


class EmitError(Exception):
    """An argument of the op has no literal spelling in a case file."""


HEADER = '''"""{title}

Written by `conformance localize {case} --backend {backend}`, with the op's
inputs as eager computed them in the model (saved beside this file).
Run it: pytest --backend={backend} --cases {directory} -k {case_id}
"""
from pathlib import Path

import torch

from conformance import Exact, op

HERE = Path(__file__).resolve().parent
{constants}

def _inputs():
    return torch.load(HERE / "{inputs}", weights_only=True)


def fragment({params}):
{body}


CASES = [
    op(
        "{case_id}",
        fragment,
        Exact(_inputs, "{described}"),
        ops={ops},
        tags={{"localized"}},
    ),
]
'''
# Operands kept as they were in the model, constants of the program (a buffer, a weight), not inputs:
# loaded once, captured by `fragment`, so torch.export freezes them into the program as the model's were.
CONSTANTS = '''# The model's own constants among the operands, frozen into the program as in the model (not inputs).
CONSTANTS = torch.load(HERE / "{file}", weights_only=True)
'''


def literal(value: Any, names: dict[torch.fx.Node, str]) -> str:
    """Python source for one argument: a tensor input's parameter name (or a value the fragment computed), or the value itself."""
    if isinstance(value, torch.fx.Node):
        if value not in names and value.target is operator.getitem and value.args[0] in names:
            return f"{names[value.args[0]]}[{value.args[1]}]"  # one output of an op returning several
        return names[value]
    if isinstance(value, (list, tuple)):
        inner = ", ".join(literal(v, names) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
    if isinstance(value, float) and not math.isfinite(value):
        return f"float({str(value)!r})"
    if value is None or isinstance(value, (bool, int, float, str)):
        return repr(value)
    if isinstance(value, torch.dtype):
        return f"torch.{str(value).removeprefix('torch.')}"
    if isinstance(value, torch.device):
        return f"torch.device({str(value)!r})"
    if isinstance(value, (torch.layout, torch.memory_format)):
        return str(value)  # torch.strided, torch.contiguous_format
    raise EmitError(f"argument {value!r} ({type(value).__name__}) has no literal form in a case file")


def tensor_args(op: OpNode) -> list[torch.fx.Node]:
    """The op's tensor arguments in order of appearance, each once: the case's inputs."""
    found: list[torch.fx.Node] = []
    torch.fx.node.map_arg((op.node.args, op.node.kwargs), lambda n: found.append(n) if n not in found else None)
    return found


def tensor_inputs(op: OpNode, values: dict[torch.fx.Node, Any]) -> list[torch.fx.Node]:
    """The arguments that are tensors where the model ran: the case's inputs (a size the graph computed is a constant)."""
    return [n for n in tensor_args(op) if isinstance(values[n], torch.Tensor)]


def op_function(op: OpNode, values: dict[torch.fx.Node, Any]) -> tuple[Callable[..., Any], list[torch.Tensor]]:
    """The op as the emitted case calls it: a function of its tensor inputs, and eager's values of them."""
    params = tensor_inputs(op, values)

    def call(*tensors):
        env = {**{n: values[n] for n in tensor_args(op)}, **dict(zip(params, tensors))}
        args, kwargs = torch.fx.node.map_arg((op.node.args, op.node.kwargs), env.__getitem__)
        return op.node.target(*args, **kwargs)

    return call, [values[n] for n in params]


def op_case_id(model_case: str, op: OpNode) -> str:
    """The id of the one-op case of `op` of the model case `model_case`."""
    return f"{model_case}.{op.name}"


def write_case(
    directory: Path, case_id: str, op: OpNode, values: dict[torch.fx.Node, Any], model: str, backend: str,
    before: Sequence[OpNode] = (), frozen: Sequence[torch.fx.Node] = (), stem: str | None = None,
) -> Path:
    """Write `<directory>/<stem>.py` (by default the op's name) and its inputs; returns the file.

    The case computes `op` on eager's values (`values`: eager's value of each
    node); with `before`, those ops first, in order, computing what of
    `op`'s operands they compute (the op's context in the model); the nodes
    in `frozen` are constants of the case, not inputs, as a buffer of the
    model is. Raises EmitError for an argument no literal spells (the file
    is then not written).
    """
    directory.mkdir(parents=True, exist_ok=True)
    fragment = [*before, op]
    params = fragment_inputs(fragment, values, frozen)
    names = {n: f"x{i}" for i, n in enumerate(params)}
    names.update({n: f"CONSTANTS[{i}]" for i, n in enumerate(frozen)})
    names.update({o.node: f"v{i}" for i, o in enumerate(before)})
    for o in fragment:
        for n in tensor_args(o):
            if n not in names and not _computed_by(n, before):
                names[n] = literal(values[n], {})  # a size the graph computed: a constant of the case
    lines = [f"    {names[o.node]} = {_call(o, names)}" for o in before] + [f"    return {_call(op, names)}"]
    stem = stem or op.name
    where = f" ({op.source})" if op.source else ""
    inputs_file = f"{stem}.inputs.pt"
    torch.save([[values[n].detach().clone() for n in params]], directory / inputs_file)
    constants = ""
    if frozen:
        torch.save([values[n].detach().clone() for n in frozen], directory / f"{stem}.constants.pt")
        constants = CONSTANTS.format(file=f"{stem}.constants.pt")
    described = ", ".join(f"{dtypes.name(values[n].dtype)}{list(values[n].shape)}" for n in params)
    context = f", after {', '.join(f'{o.target} (node {o.name})' for o in before)}" if before else ""
    kept = f", {', '.join(n.name for n in frozen)} frozen as in the model" if frozen else ""
    aten = tuple(dict.fromkeys(o.aten for o in fragment))
    text = HEADER.format(
        title=f"{op.target}, op {op.index} of {model}{where}{context}{kept}{'' if before or frozen else ', alone'}.",
        case=model,
        backend=backend,
        directory=directory,
        constants=constants,
        inputs=inputs_file,
        case_id=case_id,
        params=", ".join(names[n] for n in params),
        body="\n".join(lines),
        described=described,
        ops=repr(aten),
    )
    path = directory / f"{stem}.py"
    path.write_text(text)
    return path


def fragment_inputs(fragment: Sequence[OpNode], values: dict[torch.fx.Node, Any], frozen: Sequence[torch.fx.Node] = ()) -> list[torch.fx.Node]:
    """The fragment's inputs: its ops' tensor arguments that no op of it computes, less the constants, in order."""
    found: list[torch.fx.Node] = []
    earlier = fragment[:-1]
    for o in fragment:
        for n in tensor_inputs(o, values):
            if n not in found and n not in frozen and not _computed_by(n, earlier):
                found.append(n)
    return found


def _computed_by(n: torch.fx.Node, ops: Sequence[OpNode]) -> bool:
    """Whether `n` is the value of one of `ops` (or one output of it)."""
    made = {o.node for o in ops}
    return n in made or (n.target is operator.getitem and n.args[0] in made)


def _call(op: OpNode, names: dict[torch.fx.Node, str]) -> str:
    args = [literal(a, names) for a in op.node.args] + [f"{k}={literal(v, names)}" for k, v in op.node.kwargs.items()]
    return f"torch.ops.{op.target}({', '.join(args)})"  # e.g. torch.ops.aten.relu_.default(x0)
