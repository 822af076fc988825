"""tosa-tools: tosa-opt (validation, serialization) and the TOSA reference model."""

from __future__ import annotations

import re

from conformance.classify.text import error_line, short
from conformance.taxonomy import Code

# REQUIRE: a run-time precondition of the spec; ERROR_IF: the graph itself is not valid TOSA.
CHECK = re.compile(r"(REQUIRE|ERROR_IF)\(\) fails AT \S+ [\w:()]+: \(([^)]*(?:\)[^)\n]*)*)\)\s*\n\s*Op(\w+): ([^\n]+)")
FATAL = re.compile(r"FATAL ERROR AT \S+ (\w+)\(\):\s*\n+([^\n]+)")
# MLIR quotes the offending source line after the error: `%0 = "arith.constant"() ...`.
FOREIGN_OP = re.compile(r'operation being parsed with an unregistered dialect[^\n]*\n\s*(?:%[\w#:]+(?:, %[\w#:]+)* = )?"([\w.]+)"')
# Parsed, but the serializer has no flatbuffer operator for it.
UNSERIALIZABLE = re.compile(r"unsupported tosa operator ([\w.]+)")
MISSING = re.compile(r"(tosa-opt|tosa_reference_model) was not found")
# The model itself died (a C++ exception nobody caught, an assertion): no check of the spec said why.
KILLED = re.compile(r"tosa_reference_model killed by signal (\w+)[^\n]*\n?(?:terminate called after throwing[^\n]*\n\s*what\(\):\s*([^\n]+))?")
# It exited 0 but its outputs are missing or unreadable (toolchain/tosa_reference.py says which).
BAD_OUTPUT = re.compile(r"tosa_reference_model exited with status 0:\n(wrote [^\n]+)")


def parse(stage: str, text: str):
    if "tosa_reference_model" in text:
        match = CHECK.search(text)
        if match:
            check, condition, op, message = match.groups()
            op_name = f"tosa.{_snake(op)}"
            if check == "ERROR_IF":
                return Code.VERIFIER_ERROR, op_name, (
                    f"the lowering built an invalid {op_name}: the TOSA reference model's ERROR_IF check fails "
                    f"({short(message, 150)}; spec condition {condition})"
                )
            return Code.RUNTIME_ERROR, op_name, (
                f"the TOSA reference model rejects {op_name} at run time: {short(message, 150)} "
                f"(spec requirement {condition})"
            )
        match = FATAL.search(text)
        if match:
            where, message = match.groups()
            return Code.RUNTIME_ERROR, None, f"the TOSA reference model stopped in {where}: {short(message, 200)}"
        killed = KILLED.search(text)
        if killed:
            signal, what = killed.groups()
            why = f": {short(what, 200)}" if what else ""
            return Code.CRASH, None, f"the TOSA reference model crashed ({signal}){why}"
        bad = BAD_OUTPUT.search(text)
        if bad:
            return Code.RUNTIME_ERROR, None, f"the TOSA reference model succeeded but {short(bad.group(1), 200)}"
        return None
    if "tosa-opt" in text:
        foreign = FOREIGN_OP.search(text)
        if foreign:
            op = foreign.group(1)
            return Code.UNSUPPORTED_OP, op, (
                f"tosa-opt cannot read {op}: torch-mlir's TOSA output holds an op outside the TOSA dialect"
            )
        unserializable = UNSERIALIZABLE.search(text)
        if unserializable:
            op = unserializable.group(1)
            return Code.UNSUPPORTED_OP, op, (
                f"tosa-opt cannot serialize {op}: the TOSA flatbuffer has no such operator, "
                "and torch-mlir's TOSA output holds one"
            )
        line = error_line(text)
        if line:
            op = re.search(r"'([\w]+\.[\w.]+)' op", line)
            return Code.COMPILER_ERROR, op.group(1) if op else None, f"tosa-opt rejects the TOSA: {short(line, 250)}"
    return None


def _snake(name: str) -> str:
    """`Pow` -> `pow`, `ReduceSum` -> `reduce_sum` (TOSA op names)."""
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()
