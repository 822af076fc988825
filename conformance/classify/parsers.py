"""The diagnostic parsers, asked in order; the first that recognises the text wins.

A parser takes (stage, text) and returns (code, op, explanation) or None.
`text` is the exception ("Type: message") followed by what the stage printed.
Order matters: type and dynamic-shape refusals are recognised before the
generic per-tool rules, which would otherwise call them plain errors.
"""

from __future__ import annotations

from typing import Callable

from conformance.classify import iree, mlir_types, onnx, torch_export, torch_mlir, tosa_tools

Parser = Callable[[str, str], "tuple[str, str | None, str] | None"]

PARSERS: list[Parser] = [
    onnx.parse_exporter,
    torch_export.parse,
    torch_export.parse_decompositions,
    onnx.parse,
    mlir_types.parse,
    torch_mlir.parse_import,
    torch_mlir.parse,
    tosa_tools.parse,
    iree.parse,
]
