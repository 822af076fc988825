"""tosa-tools: tosa-opt (validation, serialization) and the TOSA reference model."""

from __future__ import annotations

import re

from conformance.classify.text import error_line, short
from conformance.taxonomy import Code

REQUIRE = re.compile(r"REQUIRE\(\) fails AT \S+ [\w:()]+: \(([^)]*(?:\)[^)\n]*)*)\)\s*\n\s*Op(\w+): ([^\n]+)")
FATAL = re.compile(r"FATAL ERROR AT \S+ (\w+)\(\):\s*\n+([^\n]+)")
# MLIR quotes the offending source line after the error: `%0 = "arith.constant"() ...`.
FOREIGN_OP = re.compile(r'operation being parsed with an unregistered dialect[^\n]*\n\s*(?:%[\w#:]+(?:, %[\w#:]+)* = )?"([\w.]+)"')
MISSING = re.compile(r"(tosa-opt|tosa_reference_model) was not found")


def parse(stage: str, text: str):
    if "tosa_reference_model" in text:
        match = REQUIRE.search(text)
        if match:
            condition, op, message = match.groups()
            op_name = f"tosa.{_snake(op)}"
            return Code.RUNTIME_ERROR, op_name, (
                f"the TOSA reference model rejects {op_name} at run time: {short(message, 150)} "
                f"(spec requirement {condition})"
            )
        match = FATAL.search(text)
        if match:
            where, message = match.groups()
            return Code.RUNTIME_ERROR, None, f"the TOSA reference model stopped in {where}: {short(message, 200)}"
        return None
    if "tosa-opt" in text:
        foreign = FOREIGN_OP.search(text)
        if foreign:
            op = foreign.group(1)
            return Code.UNSUPPORTED_OP, op, (
                f"tosa-opt cannot read {op}: torch-mlir's TOSA output holds an op outside the TOSA dialect"
            )
        line = error_line(text)
        if line:
            op = re.search(r"'([\w]+\.[\w.]+)' op", line)
            return Code.COMPILER_ERROR, op.group(1) if op else None, f"tosa-opt rejects the TOSA: {short(line, 250)}"
    return None


def _snake(name: str) -> str:
    """`Pow` -> `pow`, `ReduceSum` -> `reduce_sum` (TOSA op names)."""
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()
