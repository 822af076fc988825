"""IREE: iree-compile diagnostics and runtime errors."""

from __future__ import annotations

import re

from conformance.classify.text import clean, error_line, short
from conformance.taxonomy import Code

LEGALIZE = re.compile(r"failed to legalize operation '([\w.]+)'")
PARSE_ERRORS = re.compile(
    r"custom op '[\w.]+' (?:is unknown|expected )|unknown (?:type|attribute|dialect)|"
    r"expected (?:'[^']+'|[\w ]+) (?:in|after|before|to)|dialect '\w+' not found|"
    r"unregistered operation|does not reference a valid"
)
RUNTIME = re.compile(r"Error invoking function: (?:[\w/.]+:\d+: )?(\w+); ([^;\n]+)")


def parse(stage: str, text: str):
    if "iree-compile" in text:
        return _compile(text)
    match = RUNTIME.search(text)
    if match:
        status, message = match.groups()
        return Code.RUNTIME_ERROR, None, f"the IREE runtime failed ({status}): {short(message, 200)}"
    return None


def _compile(text: str):
    line = error_line(text) or ""
    if PARSE_ERRORS.search(text) and ("see current operation" not in text):
        return (
            Code.TOOLCHAIN_SKEW,
            None,
            f"iree-compile cannot parse the IR torch-mlir printed (two MLIR builds disagree): {short(line, 200)}",
        )
    match = LEGALIZE.search(text)
    if match:
        op = match.group(1)
        return Code.UNSUPPORTED_OP, op, f"iree-compile cannot lower {op}: {short(clean(line), 200)}"
    if "killed by signal" in text.splitlines()[0] if text else False:
        return Code.CRASH, None, f"iree-compile crashed: {short(text.splitlines()[0], 200)}"
    if line:
        return Code.COMPILER_ERROR, _op_of(line), f"iree-compile failed: {short(line, 250)}"
    return None


def _op_of(line: str) -> str | None:
    match = re.search(r"'([\w]+\.[\w.]+)' op", line)
    return match.group(1) if match else None
