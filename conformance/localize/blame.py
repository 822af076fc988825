"""Which op a localization blames, once the search has found the first failing cut.

The op that cut adds is the culprit. For a failure other than wrong numbers
it is the op blamed, and its run alone says whether it fails alone as in
the model. For wrong numbers the culprit and up to SUSPECTS ops feeding it
run alone on eager's activations; the op blamed is the one whose own error
against fp64 exceeds its dtype's tolerance and the noise floor by the most
(oracle.blame); none such means the error accumulated on the way.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from conformance.localize import graph, oracle
from conformance.localize.emit import op_case_id
from conformance.localize.search import at, same_failure
from conformance.result import Result
from conformance.toolchain import mlir

SUSPECTS = 8  # for numerics: the op at the cut and up to this many ops feeding it, checked alone
LOWERED_SHOWN = 4  # ops named for what a numerically wrong op lowered to


def suspects(model_graph: graph.Graph, culprit: graph.OpNode, count: int) -> list[graph.OpNode]:
    """The op at the cut, then (nearest first) up to `count` earlier ops whose values reach it."""
    if count == 0:
        return [culprit]
    ancestors: set = set()
    stack = [culprit.node]
    while stack:
        for n in stack.pop().all_input_nodes:
            if n not in ancestors:
                ancestors.add(n)
                stack.append(n)
    feeding = [o for o in model_graph.ops[: culprit.index - 1] if o.node in ancestors]
    return [culprit, *reversed(feeding[-count:])]


@dataclass
class Checked:
    """The suspects checked alone, each by its node's name: its one-op case, its Result, its own error."""

    case_id: str  # the model case
    ops: list[graph.OpNode]  # the op at the cut first
    files: dict[str, Path]  # its one-op case file
    unwritten: dict[str, str]  # why it has none
    alone: dict[str, Result]  # its Result alone
    errors: dict[str, oracle.OpError]  # numerics: its own error against fp64
    ran: bool  # whether any ran (one compile, the suspects in one batch)

    def case_of(self, op: graph.OpNode) -> str:
        return op_case_id(self.case_id, op)


@dataclass
class Blame:
    """The op blamed, its run alone, the verdict, and the MLIR op to name."""

    op: graph.OpNode
    alone: Result | None
    verdict: str
    mlir_op: str | None


def blame(failure: Result, culprit: graph.OpNode, checked: Checked, numeric: bool) -> Blame:
    """The op blamed for `failure`: for numerics the suspect off by the most on its own, else the culprit."""
    blamed_name = oracle.blame(checked.errors) if numeric else culprit.name
    blamed = next((s for s in checked.ops if s.name == blamed_name), culprit)
    alone = checked.alone.get(blamed.name)
    return Blame(blamed, alone, verdict(failure, numeric, blamed_name, alone), mlir_op(alone, failure, numeric))


def verdict(failure: Result, numeric: bool, blamed: str | None, alone: Result | None) -> str:
    if numeric:
        if blamed is None:
            return "propagated: no op near the cut is off by more than its dtype allows; the error at the cut accumulated"
        return "local: the op's own error exceeds its dtype's tolerance and the noise floor"
    if alone is None:
        return "not run alone: the op has no case file (see suspects)"
    if same_failure(failure, alone):
        return "fails alone as in the model"
    return f"alone it gives {alone.code or alone.status}{at(alone.op)}: the failure needs its context in the model"


def mlir_op(alone: Result | None, failure: Result, numeric: bool) -> str | None:
    """The MLIR op the failure names (not an ATen op); for a numeric failure, what the op alone lowered to.

    A wrong number names no op, but the op's own bundle keeps the IR its run
    compiled: the ops computing in it are what the ATen op became. (Other
    failures stop before that IR: their bundle holds an earlier dialect.)
    """
    for r in (alone, failure):
        if r is not None and r.op and not r.op.startswith(("aten.", "prims.")):
            return r.op
    if not numeric or alone is None or not alone.artifacts:
        return None
    lowered = _lowered_ops(Path(alone.artifacts))
    if not lowered:
        return None
    return ", ".join(lowered[:LOWERED_SHOWN]) + (", ..." if len(lowered) > LOWERED_SHOWN else "")


def _lowered_ops(bundle: Path) -> list[str]:
    """The computing ops of the IR a bundle's failing stage took (input.mlir first, where there are several)."""
    files = sorted(bundle.glob("*.mlir"), key=lambda p: (p.name != "input.mlir", p.name))
    return mlir.computing_ops(files[0].read_text()) if files else []
