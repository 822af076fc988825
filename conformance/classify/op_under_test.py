"""The op a failure that names none of its own is charged to: the op its case tests.

A comparison says *that* outputs differ, not which op made them differ. For
a case whose graph computes one ATen op (after decomposition) that op is the
answer; for a case of several ops, the one it declares under test when that
one is in the graph (`op("cumsum.dim0", ...)` tests aten.cumsum; a cast or a
view around it is scaffolding). Otherwise (a model) nothing is named here:
`--localize` finds the op. Ops are spelt as torch-mlir's IR spells them,
like every other op a failure names: aten.add.Tensor, aten.tanh (no `.default`).
"""

from __future__ import annotations

from typing import Iterable

# Graph nodes that compute nothing a backend could get wrong.
BOOKKEEPING = {"aten._assert_tensor_metadata", "aten._assert_scalar", "aten._assert_async", "aten.sym_size",
               "aten.sym_constrain_range_for_size", "aten.sym_constrain_range"}


def ir_name(graph_op: str) -> str:
    """aten.tanh.default -> aten.tanh; aten.add.Tensor stays."""
    return graph_op.removesuffix(".default")


def packet(op: str) -> str:
    """The op without its overload: aten.add.Tensor -> aten.add."""
    return ".".join(op.split(".")[:2])


def computing_ops(graph_ops: Iterable[str]) -> list[str]:
    """The distinct ops of a graph a backend could get wrong, as the IR spells them."""
    return sorted({ir_name(op) for op in graph_ops if packet(op) not in BOOKKEEPING})


def op_under_test(graph_ops: Iterable[str], declared: Iterable[str]) -> str | None:
    """The one computing op of the graph, else the one it holds of the ops declared under test, else None."""
    computing = computing_ops(graph_ops)
    if len(computing) == 1:
        return computing[0]
    wanted = {packet(op) for op in declared}
    if not computing:  # no graph seen (a backend that does not export): the declaration alone
        return next(iter(wanted)) if len(wanted) == 1 else None
    chosen = sorted({op for op in computing if packet(op) in wanted})
    return chosen[0] if len(chosen) == 1 else None
