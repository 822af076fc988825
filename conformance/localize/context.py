"""When the op blamed does not fail alone: the context in the model that makes it fail.

Alone, the op computes on eager's activations given as inputs. In the
model it may fail only with what surrounds it:

    a constant operand  a buffer or weight of the model is a constant frozen into the program there;
                        alone it became an input (torch-mlir's importer, for one, takes the two apart)
    the op before       an operand computed by another op: what the compiler sees of that value there
                        (the dtype it was converted from, a view's layout, a fold or a fusion)

Each is a case of its own, written by emit.py (the op with its constants
frozen; the op before and the op, as one case), all run in one batch; the
first that fails as the model does names the context, and its case file
is the smallest case that still fails.
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx

from conformance import dtypes
from conformance.localize import graph
from conformance.localize.emit import tensor_args


@dataclass
class Candidate:
    """One context to try: the op blamed after `before`, with `frozen` kept constants; `said` says which."""

    kind: str  # "constant" or "op before"
    suffix: str  # of its case id and file stem
    said: str
    before: list[graph.OpNode] = field(default_factory=list)
    frozen: list[torch.fx.Node] = field(default_factory=list)


def candidates(model_graph: graph.Graph, op: graph.OpNode, values: dict[torch.fx.Node, Any]) -> list[Candidate]:
    """The contexts to try, one case each: the constants frozen (each alone, then all), then each op computing an operand."""
    names = operand_names(op)
    found: list[Candidate] = []
    inputs = [n for n in tensor_args(op) if isinstance(values.get(n), torch.Tensor)]
    constants = [n for n in inputs if n.op == "get_attr"]
    # Each constant frozen alone (the others inputs), then all of them: a case needs an input left to export.
    for group in [[n] for n in constants] + ([constants] if len(constants) > 1 else []):
        if len(group) == len(inputs):
            continue
        said = "; ".join(
            f"its operand `{names.get(n, n.name)}` is the model's {_attribute_kind(model_graph.module, n.target)} "
            f"{n.target} ({describe(values[n])}), a constant of the program" for n in group
        )
        suffix = "frozen_" + ("all" if len(group) > 1 else re.sub(r"\W", "", names.get(group[0], group[0].name)))
        found.append(Candidate("constant", suffix, f"{said}; alone it became an input", frozen=group))
    for n in tensor_args(op):
        producer = _producer(model_graph, n)
        if producer is None or not isinstance(values.get(n), torch.Tensor):
            continue
        came_from = [describe(values[a]) for a in tensor_args(producer) if isinstance(values.get(a), torch.Tensor)]
        origin = f" from {', '.join(came_from)}" if came_from else ""
        found.append(Candidate(
            "op before", f"after_{producer.name}",
            f"its operand `{names.get(n, n.name)}` ({describe(values[n])}) is computed by node {producer.name} "
            f"({producer.aten}){origin}",
            before=[producer],
        ))
    return found


def nodes_needed(model_graph: graph.Graph, op: graph.OpNode) -> set[torch.fx.Node]:
    """The nodes whose eager values the contexts of `op` need: its arguments, and those of the ops computing them."""
    wanted = set(tensor_args(op))
    for n in list(wanted):
        producer = _producer(model_graph, n)
        if producer is not None:
            wanted |= set(tensor_args(producer))
    return wanted


def operand_names(op: graph.OpNode) -> dict[torch.fx.Node, str]:
    """Each node argument by the op's schema name (`indices[0]` for a list's first), where the schema is known."""
    schema = getattr(op.node.target, "_schema", None)
    if schema is None:
        return {}
    named: dict[torch.fx.Node, str] = {}
    positional = [a.name for a in schema.arguments]
    pairs = list(zip(positional, op.node.args)) + list(op.node.kwargs.items())
    for name, value in pairs:
        if isinstance(value, torch.fx.Node):
            named.setdefault(value, name)
        elif isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                if isinstance(item, torch.fx.Node):
                    named.setdefault(item, f"{name}[{i}]")
    return named


def describe(value: torch.Tensor) -> str:
    """`f32[1, 16, 16]`, and its strides where it is not laid out contiguously (a view's)."""
    text = f"{dtypes.name(value.dtype)}{list(value.shape)}"
    if not value.is_contiguous():
        text += f" non-contiguous (strides {list(value.stride())})"
    return text


def _producer(model_graph: graph.Graph, n: torch.fx.Node) -> graph.OpNode | None:
    """The op of the graph computing `n` (the op whose tuple it unpacks, for a getitem), or None (an input, a constant)."""
    base = n.args[0] if n.op == "call_function" and n.target is operator.getitem else n
    index = model_graph.owner.get(base, 0)
    return model_graph.op(index) if index else None


def _attribute_kind(module: torch.nn.Module, target: str) -> str:
    if target in dict(module.named_parameters()):
        return "parameter"
    if target in dict(module.named_buffers()):
        return "buffer"
    return "constant"
