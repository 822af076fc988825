"""Higher-order ops inlined: the ops of their bodies become ops of the graph, for cutting and for blame.

torch.export keeps some regions of a model as one higher-order op calling
a subgraph: `torch.no_grad()` (wrap_with_set_grad_enabled), `torch.autocast`
(wrap_with_autocast), `torch.cond`, `torch.while_loop`, a nested compile
region (invoke_subgraph). No cut can split such an op and no case file
spells it, so localization would stop at it (every transformers decoder
computes its rotary embedding under `torch.no_grad()`). Each is replaced by
its body's ops, where that computes what the model computes on its inputs:

    wrap_with_set_grad_enabled  the body as is: a forward pass computes the same values with or without grad
    wrap_with_autocast          the body; where autocast is on, an op that computed in another dtype than its
                                inputs give gets them cast to that dtype first (autocast's own cast, made explicit)
    invoke_subgraph             the body as is
    cond                        the branch eager takes on the case's inputs (the other is not in the model's run)
    while_loop                  the body once per iteration eager runs on the case's inputs, up to MAX_UNROLL

cond and while_loop are decided on the values eager computes on the case's
first input set (the inputs the cuts run on), so parent and child, reading
the same saved inputs, inline alike. What stays whole (a loop longer than
MAX_UNROLL, a higher-order op of another kind) stays one op, and `Inlined`
says why. Every op that came from a body keeps, in its meta, the chain of
higher-order ops it sits in (WITHIN).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx

WITHIN = "localize_within"  # node.meta key: the higher-order ops an inlined op sat in, outermost first
MAX_UNROLL = 64  # a while_loop running more iterations than this on the inputs stays one op
MAX_DEPTH = 16  # nesting levels inlined (one pass each)


@dataclass
class Inlined:
    """What inlining did, by the higher-order op's node name."""

    inlined: dict[str, str] = field(default_factory=dict)  # node -> how ("its true branch, the one eager takes")
    kept: dict[str, str] = field(default_factory=dict)  # node -> why it stays one op


@dataclass
class _Plan:
    """One higher-order op to inline: the body spliced in `times` times on `operands` (for a loop, carries first)."""

    label: str
    body: torch.fx.GraphModule
    operands: list[Any]
    times: int = 1
    carried: int = 0  # a loop's carried values: the first `carried` operands, replaced by each iteration's outputs
    autocast_dtype: torch.dtype | None = None


def is_higher_order(node: torch.fx.Node) -> bool:
    return node.op == "call_function" and isinstance(node.target, torch._ops.HigherOrderOperator)


def inline(module: torch.fx.GraphModule, inputs: list[torch.Tensor] | None) -> tuple[torch.fx.GraphModule, Inlined]:
    """`module` (changed in place) with its higher-order ops inlined where they can be; and what was done.

    `inputs` are the values cond and while_loop are decided on (None: they stay whole).
    """
    done = Inlined()
    for _ in range(MAX_DEPTH):
        pending = [n for n in module.graph.nodes if is_higher_order(n) and n.name not in done.kept]
        if not pending:
            break
        seen = _eager_arguments(module, inputs, pending) if inputs is not None and any(_needs_values(n) for n in pending) else {}
        for node in pending:
            plan = _plan(module, node, seen, done)
            if plan is not None:
                _splice(module, node, plan)
                done.inlined[node.name] = plan.label
    module.graph.lint()
    module.recompile()
    return module, done


def within(node: torch.fx.Node) -> list[str]:
    return list(node.meta.get(WITHIN, ()))


# -- what each kind of higher-order op inlines to ---------------------------------


def _needs_values(node: torch.fx.Node) -> bool:
    return _kind(node) in ("cond", "while_loop")


def _kind(node: torch.fx.Node) -> str:
    return node.target.name() if hasattr(node.target, "name") else str(node.target)


def _plan(module: torch.fx.GraphModule, node: torch.fx.Node, seen: dict, done: Inlined) -> _Plan | None:
    """How to inline `node`, or None (recorded in `done.kept`) where it stays one op."""
    kind, args = _kind(node), node.args

    def keep(why: str) -> None:
        done.kept[node.name] = why

    if any(u.op != "call_function" or u.target is not operator.getitem for u in node.users):
        keep(f"{kind} whose result is used whole (not through its outputs one by one)")
        return None
    if kind == "wrap_with_set_grad_enabled":
        return _Plan(f"{kind} {node.name}", _body(module, args[1]), list(args[2:]))
    if kind == "wrap_with_autocast":
        _device, dtype, enabled, _cache, body = args[:5]
        return _Plan(f"{kind} {node.name}", _body(module, body), list(args[5:]), autocast_dtype=dtype if enabled else None)
    if kind == "invoke_subgraph":
        return _Plan(f"{kind} {node.name}", _body(module, args[0]), list(args[2:]))
    if kind == "cond":
        if node.name not in seen:
            keep("cond whose predicate eager did not compute here")
            return None
        taken = bool(seen[node.name])
        branch = "true" if taken else "false"
        return _Plan(f"cond {node.name} (its {branch} branch, the one eager takes on these inputs)",
                     _body(module, args[1] if taken else args[2]), list(args[3]))
    if kind == "while_loop":
        if node.name not in seen:
            keep("while_loop whose iterations eager did not run here")
            return None
        iterations = seen[node.name]
        if iterations > MAX_UNROLL:
            keep(f"while_loop running more than {MAX_UNROLL} iterations on these inputs: too long to unroll")
            return None
        carried, additional = list(args[2]), list(args[3])
        return _Plan(f"while_loop {node.name} ({iterations} iteration{'s' * (iterations != 1)}, as eager runs it on these inputs)",
                     _body(module, args[1]), carried + additional, times=iterations, carried=len(carried))
    keep(f"{kind}: a higher-order op localize does not open")
    return None


def _body(module: torch.fx.GraphModule, attribute: torch.fx.Node) -> torch.fx.GraphModule:
    return getattr(module, attribute.target)


def _eager_arguments(module: torch.fx.GraphModule, inputs: list[torch.Tensor], pending: list[torch.fx.Node]) -> dict[str, Any]:
    """For each cond: its predicate as eager computes it; for each while_loop: how many iterations eager runs."""
    wanted = {n for n in pending if _needs_values(n)}
    seen: dict[str, Any] = {}

    class Recorder(torch.fx.Interpreter):
        def run_node(self, n):
            if n in wanted:
                args = self.fetch_args_kwargs_from_env(n)[0]
                seen[n.name] = bool(args[0]) if _kind(n) == "cond" else _iterations(*args)
            return super().run_node(n)

    with torch.no_grad():
        Recorder(module).run(*inputs)
    return seen


def _iterations(cond_fn, body_fn, carried, additional) -> int:
    """How many times eager's while_loop runs its body (counting stops past MAX_UNROLL)."""
    values, count = list(carried), 0
    while count <= MAX_UNROLL and bool(cond_fn(*values, *additional)):
        values, count = list(body_fn(*values, *additional)), count + 1
    return count


# -- splicing a body in --------------------------------------------------------------


def _splice(module: torch.fx.GraphModule, node: torch.fx.Node, plan: _Plan) -> None:
    """Put `plan.body`'s ops in place of `node` (its getitem users read the body's outputs), then drop `node`."""
    graph, chain = module.graph, within(node)
    operands = list(plan.operands)
    with graph.inserting_before(node):
        for iteration in range(plan.times):
            label = plan.label if plan.times == 1 else f"{plan.label}: iteration {iteration + 1}"
            outputs = _copy_body(module, node, plan.body, operands, [*chain, label], plan.autocast_dtype)
            operands = list(outputs) + operands[plan.carried:] if plan.carried else operands
        results = operands[: plan.carried] if plan.carried else outputs
    for user in list(node.users):
        user.replace_all_uses_with(results[user.args[1]])
        graph.erase_node(user)
    bodies = [a for a in node.all_input_nodes if a.op == "get_attr"]
    graph.erase_node(node)
    for attribute in bodies:  # the bodies' get_attr, now unused
        if not attribute.users:
            graph.erase_node(attribute)


def _copy_body(module, node, body: torch.fx.GraphModule, operands: list, chain: list[str], autocast_dtype) -> list:
    """The body's nodes copied before `node` on `operands`; the values it returns (a list)."""
    graph = module.graph
    env: dict[torch.fx.Node, Any] = {}
    placeholders = [n for n in body.graph.nodes if n.op == "placeholder"]
    env.update(zip(placeholders, operands))
    for n in body.graph.nodes:
        if n.op == "placeholder":
            continue
        if n.op == "output":
            returned = _mapped(n.args[0], env)
            return list(returned) if isinstance(returned, (tuple, list)) else [returned]
        if n.op == "get_attr":  # a nested body, or a constant of this one: it becomes an attribute of the module
            name = f"{node.name}_{n.target}".replace(".", "_")
            if not hasattr(module, name):
                setattr(module, name, getattr(body, n.target))
            env[n] = graph.get_attr(name)
            continue
        args = torch.fx.node.map_arg((n.args, n.kwargs), env.__getitem__)
        meta = {**n.meta, WITHIN: chain}
        if autocast_dtype is not None:
            args = _autocast_casts(graph, n, args, meta)
        copied = graph.create_node(n.op, n.target, args[0], args[1], name=n.name)
        copied.meta = meta
        env[n] = copied
    raise AssertionError(f"{node.name}'s body has no output")


def _mapped(value, env):
    return torch.fx.node.map_arg(value, env.__getitem__)


def _autocast_casts(graph: torch.fx.Graph, n: torch.fx.Node, args, meta: dict):
    """`n`'s arguments, each floating input cast to the dtype `n` computed in where autocast changed it.

    Autocast casts an op's inputs before the op runs; the body recorded the
    dtype each op computed in under it (meta "val"). An op that, on its
    inputs' dtypes alone, would compute in another dtype was cast: its
    floating inputs get that cast, explicitly (a cast of its own, with `n`'s `meta`: its line, its region).
    """
    recorded = n.meta.get("val")
    if n.op != "call_function" or not isinstance(recorded, torch.Tensor) or not recorded.is_floating_point():
        return args
    if _dtype_without_autocast(n) in (None, recorded.dtype):
        return args
    dtype = recorded.dtype

    def cast(value):
        recorded_input = value.meta.get("val") if isinstance(value, torch.fx.Node) else None
        if isinstance(recorded_input, torch.Tensor) and recorded_input.is_floating_point() and recorded_input.dtype != dtype:
            converted = graph.call_function(torch.ops.aten._to_copy.default, (value,), {"dtype": dtype})
            converted.meta = {**meta, "val": recorded_input.to(dtype)}
            return converted
        return value

    return torch.fx.node.map_aggregate(args, cast)


def _dtype_without_autocast(n: torch.fx.Node) -> torch.dtype | None:
    """The dtype `n` computes in on its recorded inputs, autocast off (run on meta tensors); None if unknown."""

    def as_meta(value):
        if isinstance(value, torch.fx.Node):
            val = value.meta.get("val")
            if not isinstance(val, torch.Tensor):
                raise LookupError(value.name)
            return torch.empty(tuple(int(d) for d in val.shape), dtype=val.dtype, device="meta")
        return value

    try:
        args, kwargs = torch.fx.node.map_aggregate((n.args, n.kwargs), as_meta)
        with torch.autocast("cpu", enabled=False):
            result = n.target(*args, **kwargs)
    except Exception:  # an op with no meta kernel, a symbolic size: say nothing rather than guess
        return None
    return result.dtype if isinstance(result, torch.Tensor) else None
