"""torch.export failures: data-dependent control flow, unsupported constructs, non-tensor outputs."""

from __future__ import annotations

import re

from conformance.classify.text import short
from conformance.taxonomy import Code

# FakeTensor exceptions name the op whose output cannot be traced without real data.
DATA_OPS = [
    (re.compile(r"DataDependentOutputException: (aten\.[\w.]+)"), "{op} returns a value that depends on the input data"),
    (re.compile(r"DynamicOutputShapeException: (aten\.[\w.]+)"), "{op} has an output shape that depends on the input data"),
]

REASONS = [
    (re.compile(r"(PendingUnbackedSymbolNotFound: [^\n]*)"), "an output size that depends on the input data"),
    (re.compile(r"(Could not guard on data-dependent expression[^\n]*|GuardOnDataDependentSymNode[^\n]*|data-dependent[^\n]*)"), "data-dependent control flow or shape"),
    (re.compile(r"(Constraints violated[^\n]*|specialized to be a constant[^\n]*|[\w ]*marked as dynamic but[^\n]*)"), "a dynamic dimension that the model specializes"),
    (re.compile(r"(Unsupported: [^\n]+)"), "a construct torch.export does not support"),
    (re.compile(r"((?:[Oo]utput|Expected .*output)[^\n]*(?:not a tensor|non-tensor|type)[^\n]*)"), "a non-tensor output"),
    (re.compile(r"(aten\.[\w.]+ (?:is not|has no) [^\n]+)"), "an op with no export support"),
]


def parse(stage: str, text: str):
    if stage != "export":
        return None
    for pattern, reason in DATA_OPS:
        match = pattern.search(text)
        if match:
            op = ".".join(match.group(1).split(".")[:2])  # aten.equal.default -> aten.equal
            return Code.EXPORT_UNSUPPORTED, op, f"torch.export cannot capture the case: {reason.format(op=match.group(1))}"
    for pattern, reason in REASONS:
        match = pattern.search(text)
        if match:
            op = _op(text)
            where = f" in {op}" if op else ""
            return Code.EXPORT_UNSUPPORTED, op, f"torch.export cannot capture the case: {reason}{where} ({short(match.group(1), 200)})"
    first = next((l.strip() for l in text.splitlines() if l.strip()), "")
    if first.startswith("torch."):  # torch's own exception types; anything else is a bug to look at (UNKNOWN)
        return Code.EXPORT_UNSUPPORTED, _op(text), f"torch.export failed: {short(first.split(': ', 1)[-1], 250)}"
    return None


def _op(text: str) -> str | None:
    match = re.search(r"\baten\.([a-z_0-9]+)(?:\.\w+)?", text)
    return f"aten.{match.group(1)}" if match else None
