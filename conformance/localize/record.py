"""The localization record: its fields, built from what a localization found; as Results carry it and reports show it.

A record is written as localized.json and carried in a Result's
`extras["localized"]` as a plain dict (`Localized.to_dict()`), the form
reports, the pytest plugin and `conformance localize --json` read.
Light on purpose: reports and the pytest plugin read it without torch.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from conformance.localize.search import at

if TYPE_CHECKING:  # only their attributes are read here: no torch at import
    from conformance.localize.blame import Blame, Checked
    from conformance.localize.graph import OpNode
    from conformance.localize.search import Search
    from conformance.result import Result

EXTRAS_KEY = "localized"  # Result.extras key of the record
OPTIONAL = ("own_error", "note", "within", "context", "contexts_tried", "decomposed", "inlined")  # left out when there is nothing to say


@dataclass
class Localized:
    """One localization's findings: the op blamed, how the search got there, the one-op case and its bundle."""

    case: str
    backend: str
    code: str | None  # the model's failure
    op: str  # the ATen op blamed
    target: str  # its overload, `aten.relu_.default`
    node: str  # its FX node
    index: int  # its place among the exported graph's ops, from 1
    ops: int  # how many ops the exported graph has
    source: str  # the model's own line that calls it ("" when none)
    module: str  # the submodule that calls it
    mlir_op: str | None  # the MLIR op the failure names, or what a numerically wrong op lowered to
    verdict: str
    first_failing_cut: dict[str, Any]  # the op it adds, the cut's failure, and its error where it ran to the end
    alone: dict[str, Any] | None  # the blamed op's own run: status, code, explanation, its case id
    suspects: list[dict[str, Any]]  # each op checked alone: its run and, for numerics, its own error
    case_file: str | None  # the blamed op's one-op case
    bundle: str | None  # that case's reproducer bundle
    cuts_run: int
    trail: dict[str, str]  # cut -> its code (or status), in cut order
    failed_otherwise: dict[str, str]  # cuts that failed, but not as the model does
    compiles: int  # each cut, then the suspects in one batch
    seconds: float
    workspace: str
    found_by: str = "search"  # "search" (bisection), or "named" (the node the failure named, confirmed by two cuts)
    own_error: dict[str, Any] | None = None  # numerics: the blamed op's error against fp64
    note: str | None = None  # a caveat (the model fails already at its first op)
    within: list[str] | None = None  # the higher-order ops the op sat in (`wrap_with_set_grad_enabled ...`), outermost first
    context: dict[str, Any] | None = None  # not failing alone: the context it fails in, its case file, bundle and run
    contexts_tried: list[dict[str, Any]] | None = None  # each context tried, and its run
    decomposed: bool | None = None  # an op case of one op, cut in its core ATen decomposition
    inlined: dict[str, str] | None = None  # the higher-order ops opened for cutting, and how

    @classmethod
    def build(
        cls, failure: Result, culprit: OpNode, ops: int, found: Search, first_cut: dict[str, Any],
        checked: Checked, blame: Blame, seconds: float, workspace: str, decomposed: bool = False, inlined: dict[str, str] | None = None,
    ) -> Localized:
        """The record of a localization of `failure` (a case's Result) from its steps' findings."""
        blamed, first = blame.op, found.tried[found.first]
        tried_in_context = blame.in_context
        return cls(
            case=checked.case_id,
            backend=failure.backend,
            code=failure.code,
            op=blamed.aten,
            target=blamed.target,
            node=blamed.name,
            index=blamed.index,
            ops=ops,
            source=blamed.source,
            module=blamed.module_path,
            mlir_op=blame.mlir_op,
            verdict=blame.verdict,
            first_failing_cut={
                "index": culprit.index, "node": culprit.name, "op": culprit.aten, "code": first.code,
                "explanation": first.explanation, **first_cut,
            },
            alone=brief(blame.alone) | {"case": checked.case_of(blamed)} if blame.alone else None,
            suspects=[_suspect(checked, s) for s in checked.ops],
            case_file=str(checked.files[blamed.name]) if blamed.name in checked.files else None,
            bundle=blame.alone.artifacts if blame.alone else None,
            cuts_run=len(found.tried),
            trail={str(k): r.code or r.status for k, r in sorted(found.tried.items())},
            failed_otherwise={str(k): f"{r.code}{at(r.op)}" for k, r in found.otherwise(failure).items()},
            compiles=len(found.tried) + checked.ran + bool(tried_in_context and tried_in_context.ran),
            seconds=seconds,
            workspace=workspace,
            own_error=checked.errors[blamed.name].to_dict() if blamed.name in checked.errors else None,
            note=(
                f"{failure.backend} fails already on the first op of {checked.case_id}: the failure may not be this op's alone"
                if culprit.index == 1
                else None
            ),
            found_by="named" if found.named else "search",
            within=blamed.within or None,
            context=_context(blame) if blame.context else None,
            contexts_tried=[_tried(tried_in_context, c) for c in tried_in_context.tries] if tried_in_context else None,
            decomposed=decomposed or None,
            inlined=inlined or None,
        )

    def to_dict(self) -> dict[str, Any]:
        record = dataclasses.asdict(self)
        for key in OPTIONAL:
            if record[key] is None:
                del record[key]
        return record


def _suspect(checked: Checked, op: OpNode) -> dict[str, Any]:
    entry = {"node": op.name, "op": op.aten, "index": op.index, **brief(checked.alone.get(op.name))}
    if op.name in checked.errors:
        entry["error"] = checked.errors[op.name].to_dict()
    if op.name in checked.unwritten:
        entry["not_written"] = checked.unwritten[op.name]
    return entry


def _context(blame: Blame) -> dict[str, Any]:
    """The context the op fails in: what it is, its case file (the op before and the op, or the op with its constants) and run."""
    found, ran = blame.context, blame.in_context.ran[blame.context.suffix]
    return {
        "kind": found.kind, "said": found.said, "before": [o.name for o in found.before], "frozen": [n.name for n in found.frozen],
        "case": ran.case, "case_file": str(blame.in_context.files[found.suffix]), "bundle": ran.artifacts, **brief(ran),
    }


def _tried(in_context, candidate) -> dict[str, Any]:
    entry = {"kind": candidate.kind, "said": candidate.said, **brief(in_context.ran.get(candidate.suffix))}
    if candidate.suffix in in_context.unwritten:
        entry["not_written"] = in_context.unwritten[candidate.suffix]
    return entry


def brief(result: Result | None) -> dict[str, Any]:
    if result is None:
        return {}
    return {"status": result.status, "code": result.code, "explanation": result.explanation}


def localization(result: Any) -> dict | None:
    """The record a Result carries, or None."""
    extras = getattr(result, "extras", None)
    record = extras.get(EXTRAS_KEY) if isinstance(extras, dict) else None
    return record if isinstance(record, dict) else None


def summary(record: dict) -> str:
    """One line: the op, its source line, how far off it is on its own (or why nothing was localized)."""
    if "error" in record:
        return f"not localized: {record['error']}"
    own = record.get("own_error")
    numbers = f"; own error {own['own_abs']:.3g} vs noise floor {own['noise_abs']:.3g}" if own else ""
    lowered = f" -> {record['mlir_op']}" if record.get("mlir_op") else ""
    inside = f" inside {' > '.join(record['within'])}" if record.get("within") else ""
    return (
        f"localized to {record['op']}{lowered} (node {record['node']}, op {record['index']} of {record['ops']}{inside}) "
        f"at {record['source'] or record.get('module') or 'an unknown line'}{numbers}; {record['verdict']}"
    )
