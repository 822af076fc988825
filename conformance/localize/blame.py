"""Which op a localization blames, once the search has found the first failing cut.

The op that cut adds is the culprit. For a failure other than wrong numbers
it is the op blamed, and its run alone says whether it fails alone as in
the model. For wrong numbers the culprit and up to SUSPECTS ops feeding it
run alone on eager's activations; the op blamed is the one whose own error
against fp64 exceeds its dtype's tolerance and the noise floor by the most
(oracle.blame); none such means the error accumulated on the way.

An op that does not fail alone as in the model is tried in its context
(context.py): the verdict names the context whose case fails as the model
does, or says none did.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from conformance.localize import context, graph, oracle
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
class InContext:
    """The op that did not fail alone, tried in its contexts: each one's case file and Result, by its suffix."""

    tries: list[context.Candidate]
    files: dict[str, Path]
    unwritten: dict[str, str]  # why a context has no case file
    ran: dict[str, Result]

    def failing(self, failure: Result) -> context.Candidate | None:
        """The first context whose case fails as the model does."""
        return next((c for c in self.tries if c.suffix in self.ran and same_failure(failure, self.ran[c.suffix])), None)


@dataclass
class Blame:
    """The op blamed, its run alone, the verdict, the MLIR op to name, and the context it fails in (if it needs one)."""

    op: graph.OpNode
    alone: Result | None
    verdict: str
    mlir_op: str | None
    context: context.Candidate | None = None
    in_context: InContext | None = None


def needs_context(failure: Result, culprit: graph.OpNode, checked: Checked, numeric: bool) -> bool:
    """Whether the op at the cut ran alone and did not fail as in the model (a wrong number has its own account)."""
    alone = checked.alone.get(culprit.name)
    return not numeric and alone is not None and not same_failure(failure, alone)


def blame(
    failure: Result, culprit: graph.OpNode, checked: Checked, numeric: bool,
    kept: dict[str, str] | None = None, in_context: InContext | None = None,
) -> Blame:
    """The op blamed for `failure`: for numerics the suspect off by the most on its own, else the culprit.

    `kept`: the higher-order ops left whole, and why; `in_context`: the
    culprit tried in its contexts, where it did not fail alone.
    """
    blamed_name = oracle.blame(checked.errors) if numeric else culprit.name
    blamed = next((s for s in checked.ops if s.name == blamed_name), culprit)
    alone = checked.alone.get(blamed.name)
    found = in_context.failing(failure) if in_context else None
    said = verdict(failure, numeric, blamed_name, alone, (kept or {}).get(blamed.name), in_context, found)
    result = in_context.ran[found.suffix] if found else alone
    return Blame(blamed, alone, said, mlir_op(result, failure, numeric), found, in_context)


def verdict(
    failure: Result, numeric: bool, blamed: str | None, alone: Result | None, kept_whole: str | None = None,
    in_context: InContext | None = None, found: context.Candidate | None = None,
) -> str:
    if numeric:
        if blamed is None:
            return "propagated: no op near the cut is off by more than its dtype allows; the error at the cut accumulated"
        return "local: the op's own error exceeds its dtype's tolerance and the noise floor"
    if alone is None:
        if kept_whole:
            return f"not run alone: a higher-order op left whole ({kept_whole})"
        return "not run alone: the op has no case file (see suspects)"
    if same_failure(failure, alone):
        return "fails alone as in the model"
    gives = f"alone it gives {alone.code or alone.status}{at(alone.op)}"
    if found is not None:
        case = "after the op before it, as one case," if found.before else "with its constants frozen as in the model"
        return f"{gives}; {case} it fails as in the model: {found.said}"
    if in_context is not None and in_context.tries:
        tried = "; ".join(
            f"{c.kind} ({c.suffix}): {in_context.ran[c.suffix].code or in_context.ran[c.suffix].status}" if c.suffix in in_context.ran
            else f"{c.kind} ({c.suffix}): {in_context.unwritten.get(c.suffix, 'not run')}"
            for c in in_context.tries
        )
        return f"{gives}: the failure needs more of its context in the model than one op before it or its constants (tried {tried})"
    return f"{gives}: the failure needs its context in the model (its operands are the model's inputs: no op before it to try)"


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
