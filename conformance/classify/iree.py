"""IREE: iree-compile diagnostics and runtime errors."""

from __future__ import annotations

import re

from conformance.classify.text import clean, crash_site, current_op, error_line, short
from conformance.taxonomy import Code

LEGALIZE = re.compile(r"failed to legalize operation '([\w.]+)'")
PARSE_ERRORS = re.compile(
    r"custom op '[\w.]+' (?:is unknown|expected )|unknown (?:type|attribute|dialect)|"
    r"expected (?:'[^']+'|[\w ]+) (?:in|after|before|to)|dialect '\w+' not found|"
    r"unregistered operation|does not reference a valid"
)
# A call that fails, or a later wait on its results (reading an output back).
RUNTIME = re.compile(r"(Error invoking function|synchronous fence failure): (?:[\w/.]+:\d+: )?([A-Z_]+); ([^;\n]+)")


def parse(stage: str, text: str):
    if "iree-compile" in text:
        return _compile(text)
    match = RUNTIME.search(text)
    if match:
        when, status, message = match.groups()
        reading = " reading an output back" if when == "synchronous fence failure" else ""
        return Code.RUNTIME_ERROR, None, f"the IREE runtime failed{reading} ({status}): {short(message, 200)}"
    return None


CRASHED = re.compile(r"iree-compile killed by signal (\w+)")


def _compile(text: str):
    crashed = CRASHED.search(text)
    if crashed:
        pattern, pass_, torch_op = crash_site(text)
        op = torch_op or current_op(text)
        where = "".join(
            part
            for part in (
                f" in {pattern}" if pattern else "",
                f" (pass {pass_})" if pass_ else "",
                f" while compiling {op}" if op else "",
            )
        )
        return Code.CRASH, op, f"iree-compile crashed with {crashed.group(1)}{where}; its stack dump is in the details"
    line = error_line(text) or ""
    if PARSE_ERRORS.search(text) and ("see current operation" not in text):
        return (
            Code.TOOLCHAIN_SKEW,
            None,
            f"iree-compile cannot parse the IR torch-mlir printed (two MLIR builds disagree): {short(line, 200)}",
        )
    match = LEGALIZE.search(text)
    if match:
        op = match.group(1).removeprefix("torch.")
        if op.startswith("constant."):
            return Code.UNSUPPORTED_OP, None, (
                f"iree-compile cannot lower the case: it left torch.{op} unconverted, so an op using that scalar was not lowered"
            )
        offending = next((l for l in text.splitlines() if match.group(0) in l), "")
        if re.search(r"tensor<(?:[\dx]*\?)", offending):
            return Code.DYNAMIC_SHAPE_UNSUPPORTED, op, f"iree-compile cannot lower {op} with dynamic dimensions: {short(clean(line), 200)}"
        return Code.UNSUPPORTED_OP, op, f"iree-compile cannot lower {op}: {short(clean(line), 200)}"
    current = current_op(text)
    if line and current:
        # An op built inside IREE's pipeline rejected by its own verifier.
        op = _op_of(line) or current
        return Code.VERIFIER_ERROR, op, f"iree-compile's pipeline built an invalid {op}: {short(line, 220)}"
    if line:
        return Code.COMPILER_ERROR, _op_of(line), f"iree-compile failed: {short(line, 250)}"
    return None


def _op_of(line: str) -> str | None:
    match = re.search(r"'([\w]+\.[\w.]+)' op", line)
    return match.group(1) if match else None
