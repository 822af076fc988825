"""One op of a model as a case declaration of its own: a small file in the project's case format.

The op keeps its attributes (every non-tensor argument, written out as a
literal) and takes eager's activations at that point of the model as exact
inputs, saved beside the file. `--cases DIR` runs it like any hand-written
case, so a localized failure becomes a regression case a compiler engineer
can hand to a tool.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable

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


def _inputs():
    return torch.load(HERE / "{inputs}", weights_only=True)


CASES = [
    op(
        "{case_id}",
        lambda {params}: {call},
        Exact(_inputs, "{described}"),
        ops=("{aten}",),
        tags={{"localized"}},
    ),
]
'''


def literal(value: Any, names: dict[torch.fx.Node, str]) -> str:
    """Python source for one argument: a tensor input's parameter name, or the value itself."""
    if isinstance(value, torch.fx.Node):
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


def write_case(directory: Path, case_id: str, op: OpNode, values: dict[torch.fx.Node, Any], model: str, backend: str) -> Path:
    """Write `<directory>/<op name>.py` and its inputs (`values`: eager's value of each node); returns the file.

    Raises EmitError for an argument no literal spells (the file is then not written).
    """
    directory.mkdir(parents=True, exist_ok=True)
    params = tensor_inputs(op, values)
    names = {n: f"x{i}" for i, n in enumerate(params)}
    for n in tensor_args(op):
        if n not in names:
            names[n] = literal(values[n], {})
    call_args = [literal(a, names) for a in op.node.args] + [f"{k}={literal(v, names)}" for k, v in op.node.kwargs.items()]
    target = f"torch.ops.{op.target}"  # e.g. torch.ops.aten.relu_.default
    stem = op.name
    where = f" ({op.source})" if op.source else ""
    inputs_file = f"{stem}.inputs.pt"
    torch.save([[values[n].detach().clone() for n in params]], directory / inputs_file)
    described = ", ".join(f"{dtypes.name(values[n].dtype)}{list(values[n].shape)}" for n in params)
    text = HEADER.format(
        title=f"{op.target}, op {op.index} of {model}{where}, alone.",
        case=model,
        backend=backend,
        directory=directory,
        inputs=inputs_file,
        case_id=case_id,
        params=", ".join(names[n] for n in params),
        call=f"{target}({', '.join(call_args)})",
        described=described,
        aten=op.aten,
    )
    path = directory / f"{stem}.py"
    path.write_text(text)
    return path
