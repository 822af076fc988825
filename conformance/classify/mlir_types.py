"""Types a target rejects (f64 in TOSA, i64 where a profile wants i32) and dynamic-shape refusals.

These come from whichever tool validates the IR: iree-compile for the tosa
backend, tosa-opt --tosa-validate for tosa-ref, torch-mlir's own lowering.
"""

from __future__ import annotations

import re

from conformance.classify.text import clean, short
from conformance.taxonomy import Code

NOT_ALIGNED = re.compile(r"'([\w.]+)' op is not profile-aligned: element type '(\w+)' is not legal")
NO_PROFILE = re.compile(r"'([\w.]+)' op illegal: operation operand/result data types did not align with any profile or extension, got \(([^)]*)\)(?:, did you mean \(([^)]*)\))?")
DYNAMIC_LEVEL = re.compile(r"'([\w.]+)' op failed level check: (operand|result) shape dimension cannot be dynamic")
DYNAMIC_LEGALIZE = re.compile(r"failed to legalize operation '((?:stablehlo|chlo|mhlo|tosa)\.dynamic_[\w.]+|shape\.[\w.]+)'")
TOOLS = ("iree-compile", "tosa-opt", "tosa_reference_model")


def _reporter(text: str) -> str:
    for tool in TOOLS:
        if text.startswith(f"ToolError: {tool}") or f"{tool} exited" in text or f"{tool} killed" in text:
            return tool
    return "the compiler"


def parse(stage: str, text: str):
    """The earliest type or dynamic-shape refusal in the text (the first error is the one to fix)."""
    reporter = _reporter(text)
    found = []
    match = NOT_ALIGNED.search(text)
    if match:
        op, dtype = match.groups()
        others = [o for o in dict.fromkeys(o for o, d in NOT_ALIGNED.findall(text) if d == dtype) if o != op]
        also = f" (also in {', '.join(others[:4])}{', ...' if len(others) > 4 else ''})" if others else ""
        found.append((match.start(), (Code.ILLEGAL_TYPE, op, f"{reporter} rejects element type {dtype} in {op}{also}: TOSA's profiles have no {dtype}")))
    match = NO_PROFILE.search(text)
    if match:
        op, got, suggestion = match.groups()
        hint = f", did you mean ({suggestion})?" if suggestion else ""
        found.append((match.start(), (Code.ILLEGAL_TYPE, op, f"{reporter} rejects {op} on types ({got}): no TOSA profile or extension has them{hint}")))
    match = DYNAMIC_LEVEL.search(text)
    if match:
        found.append((match.start(), (Code.DYNAMIC_SHAPE_UNSUPPORTED, match.group(1), f"{reporter}: {short(clean(match.group(0)), 200)} (TOSA 1.0 levels require static shapes)")))
    match = DYNAMIC_LEGALIZE.search(text)
    if match:
        found.append((match.start(), (Code.DYNAMIC_SHAPE_UNSUPPORTED, match.group(1), f"{reporter} cannot handle dynamic shapes: failed to legalize operation '{match.group(1)}'")))
    return min(found)[1] if found else None
