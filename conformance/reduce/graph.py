"""Any case as a program: the ATen calls of its exported graph, on its inputs as exact tensors.

The case is exported as the backend would export it (torch.export, the
case's mode, static at its first input set); each op of the graph becomes
a call `torch.ops.aten.<op>.<overload>(...)` with its attributes written
out (localize/emit.py spells them), each weight and constant the graph
reads becomes an exact input, as do the case's own inputs. The program
computes what the case computes, op for op, so its failure on the backend
is the case's (reducer.py checks that before reducing).
"""

from __future__ import annotations

import operator
from dataclasses import replace

import torch
import torch.fx

from conformance.cases.inputs import make_inputs, make_module
from conformance.cases.spec import Case
from conformance.localize.emit import literal
from conformance.programs.program import Call, Program, with_exact
from conformance.reduce import edit

SKIPPED = ("aten._assert_", "aten.sym_constrain_range", "aten._guards")  # checks the export adds, not computations


class GraphError(Exception):
    """The case has no graph to reduce (it does not export); the message says why."""


def program_of(case: Case, seed: int, export_mode: str) -> Program:
    module, input_sets = make_module(case, seed), make_inputs(case, seed)
    inputs = [t.clone() for t in input_sets[0]]
    mode = case.export_mode or export_mode
    try:
        with torch.no_grad():
            exported = torch.export.export(module, tuple(inputs), strict=mode == "strict")
    except Exception as e:
        raise GraphError(f"{case.id} does not export ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}): no graph to reduce") from e
    graph_module = exported.module()
    number: dict[torch.fx.Node, int] = {}
    tensors: list[torch.Tensor] = []
    placeholders = [n for n in graph_module.graph.nodes if n.op == "placeholder"]
    for n, t in zip(placeholders, inputs):
        number[n] = len(tensors)
        tensors.append(t)
    for n in graph_module.graph.nodes:
        if n.op == "get_attr":
            value = _attribute(graph_module, n.target)
            if isinstance(value, torch.Tensor):
                number[n] = len(tensors)
                tensors.append(value.detach().clone())
    calls: list[tuple[torch.fx.Node, str, tuple[torch.fx.Node, ...], str]] = []
    for n in graph_module.graph.nodes:
        if n.op != "call_function":
            continue
        target = n.target
        if target is operator.getitem:
            source, index = n.args
            calls.append((n, f"{{0}}[{index!r}]", (source,), "getitem"))
            continue
        name = str(target)
        if not isinstance(target, torch._ops.OpOverload):
            raise GraphError(f"{case.id}: the exported graph calls {name}, which a case file cannot spell")
        if name.startswith(SKIPPED):
            continue
        calls.append((n, *_template(n), ".".join(name.split(".")[:2])))
    base = len(tensors)
    for k, (n, _, _, _) in enumerate(calls):
        number[n] = base + k
    output = next(n for n in graph_module.graph.nodes if n.op == "output")
    leaves: list[torch.fx.Node] = []
    torch.fx.node.map_arg(output.args, leaves.append)
    program = Program(
        inputs=(), calls=tuple(Call(template, tuple(number[o] for o in operands), op) for _, template, operands, op in calls),
        outputs=tuple(dict.fromkeys(number[n] for n in leaves if n in number)),
        rtol=case.rtol, atol=case.atol, export_mode=case.export_mode,
    )
    return with_exact(program, tensors)


def with_dynamic_dims(program: Program, case: Case) -> Program | None:
    """`program` on drawn inputs with the case's dynamic dims, for a failure that needs one; None if it has none.

    program_of traces the case static, at its first sizes. Here the case's
    own inputs take its Dyn dims again, and their values are drawn as the
    case draws them (its range; a generator's inputs as `edit.drawn` reads
    them). The calls still spell the sizes they were traced at (a reshape's),
    so such a program may not run at the other sizes: the caller checks that
    it fails as the case does before reducing it.
    """
    if not any(spec.dynamic_dims for spec in case.inputs):  # exact inputs (case.exact) leave case.inputs empty
        return None
    drawn = edit.drawn(program)
    if drawn is None:
        return None
    inputs, symbols = list(drawn.inputs), {}
    for k, spec in enumerate(case.inputs):
        dims = spec.dynamic_dims
        shape = tuple(dims[d].name if d in dims else size for d, size in enumerate(inputs[k].shape))
        values = ("uniform", spec.low, spec.high) if spec.gen is None and spec.dtype != torch.bool else inputs[k].values
        inputs[k] = replace(inputs[k], shape=shape, values=values)
        symbols.update({dyn.name: dyn.sizes for dyn in dims.values()})
    return replace(drawn, inputs=tuple(inputs), symbols=tuple(symbols.items()), seed=case.effective_seed)


def _attribute(module: torch.nn.Module, path: str):
    value = module
    for part in path.split("."):
        value = getattr(value, part)
    return value


def _template(node: torch.fx.Node) -> tuple[str, tuple[torch.fx.Node, ...]]:
    """`torch.ops.aten.add.Tensor({0}, {1}, alpha=2)` and its operand nodes, in order."""
    operands: list[torch.fx.Node] = []
    sentinel = {}

    def mark(n: torch.fx.Node) -> torch.fx.Node:
        if n not in sentinel:
            sentinel[n] = f"\x00{len(operands)}\x00"
            operands.append(n)
        return n

    torch.fx.node.map_arg((node.args, node.kwargs), mark)
    args = [literal(a, sentinel) for a in node.args] + [f"{k}={literal(v, sentinel)}" for k, v in node.kwargs.items()]
    text = f"torch.ops.{node.target}({', '.join(args)})".replace("{", "{{").replace("}", "}}")
    for i in range(len(operands)):
        text = text.replace(f"\x00{i}\x00", f"{{{i}}}")
    return text, tuple(operands)
