"""The ONNX path: torch-mlir's ONNX importer, its ONNX-to-torch conversion, onnx's checker.

The op to blame is the ONNX op (`onnx.Cast`): torch-mlir imports every node
as `torch.operator "onnx.<Op>"` and converts it to torch ops. Its conversion
fails in two ways, told apart in the explanation: there is no conversion
for the op at all (the pass leaves it in place; the onnx2torch stage names
what is left, and a one-shot pipeline stumbles on it later as "failed to
legalize operation 'torch.operator'"), or the op's conversion exists but
refused this node (its types, attributes or dynamic operands: "... that was
explicitly marked illegal").
"""

from __future__ import annotations

import re

from conformance.classify.text import clean, short
from conformance.dtypes import VTENSOR
from conformance.taxonomy import Code
from conformance.toolchain.onnx import UNCONVERTED_ONNX

ONNX_OPERATOR = re.compile(
    r"""(?:error: (?:"([^"]*)": )?)?failed to legalize operation 'torch\.operator'( that was explicitly marked illegal)?:"""
    r"""[^\n]*?name = "(onnx\.[\w.]+)"[^\n]*"""
)
UNCONVERTED = re.compile(rf"{re.escape(UNCONVERTED_ONNX)} (.+)")
NO_OPSET = "function is missing onnx opset version attribute"
IMPORT_ERROR = re.compile(r"OnnxImportError: (.*)")
UNKNOWN_ELEMENT = re.compile(r"Unknown ONNX tensor element type: (\d+)")
UNSUPPORTED_TYPEPROTO = re.compile(r"Unsupported ONNX TypeProto: (\w+?)(?:_type)? \{")
CONTAINER_ELEMENT = re.compile(r"Unsupport(?:ed)? (list|optional) element type")
ATTRIBUTE_TYPE = re.compile(r"does not support generic node attribute type (\w+) with ID \d+\.[^\n]*?name: \"([^\"]*)\"", re.S)
NOT_TOPOLOGICAL = re.compile(r"Non topologically produced ONNX (node input|graph output) '([^']*)'")
CHECKER = re.compile(r"checker\.ValidationError: (.*)")
SHAPE_INFERENCE = re.compile(r"\[ShapeInferenceError\] ([^\n]+)")
CHECKED_NODE = re.compile(r"Bad node spec for node\. Name: *\S* OpType: (\w+)")
# `{torch.onnx.to = 17 : si64, torch.onnx.axis = 0 : si64}`: a node's attributes as imported.
ATTRIBUTE = re.compile(r"torch\.onnx\.(\w+) = ([^,:}]+?)\s*(?::[^,}]*)?(?=[,}])")


# torch.onnx's dynamo exporter (the export stage of a torch case on an ONNX backend): its
# ConversionError ends with an "## Exception summary" of the exceptions it chained, the first the cause.
EXPORTER_ERROR = re.compile(r"torch\.onnx\._internal\.exporter\._errors\.\w+: ")
EXPORTER_CAUSE = re.compile(r"## Exception summary\s*<class '[\w.]*?(\w+)'>: ([^\n]+)")
NO_ONNX_FUNCTION = re.compile(r"No ONNX function found for <OpOverload\(op='([\w.]+)', overload='(\w+)'\)>\.(?: Failure message: ([^\n]+))?")


def parse_exporter(stage: str, text: str):
    """torch.onnx's exporter refusing a torch program (before anything of torch-mlir runs)."""
    if stage != "export" or not EXPORTER_ERROR.search(text):
        return None
    missing = NO_ONNX_FUNCTION.search(text)
    if missing:
        op, overload, why = missing.groups()
        reason = f" ({short(why.strip(), 120)})" if why else ""
        return Code.UNSUPPORTED_OP, op, f"torch.onnx's exporter has no ONNX function for {op}.{overload}{reason}"
    cause = EXPORTER_CAUSE.search(text)
    if cause:
        kind, message = cause.groups()
        return Code.EXPORT_UNSUPPORTED, None, f"torch.onnx's exporter cannot convert the program to ONNX ({kind}: {short(message, 200)})"
    return None


def parse(stage: str, text: str):
    for rule in (_unconverted, _operator, _no_opset, _importer, _checker):
        found = rule(text)
        if found:
            return found
    return None


def _unconverted(text: str):
    match = UNCONVERTED.search(text)
    if not match:
        return None
    ops = [op.strip() for op in match.group(1).split(",")]
    also = f" (also left: {', '.join(ops[1:])})" if len(ops) > 1 else ""
    return (
        Code.UNSUPPORTED_OP,
        ops[0],
        f"torch-mlir has no conversion for {ops[0]}: convert-torch-onnx-to-torch left it in place{also}",
    )


def _operator(text: str):
    match = ONNX_OPERATOR.search(text)
    if not match:
        return None
    node, refused, op = match.groups()
    if not refused:  # a one-shot pipeline meeting an op the conversion left behind
        return Code.UNSUPPORTED_OP, op, f"torch-mlir has no conversion for {op}: it reached the lowering as a generic torch.operator"
    facts = "; ".join(f for f in (_types(match.group(0)), _attributes(match.group(0))) if f)
    which = f"node {node}" if node else "this node"
    return Code.UNSUPPORTED_OP, op, f"torch-mlir's conversion of {op} refused {which}" + (f" ({facts})" if facts else "")


def _types(line: str) -> str:
    """`f16 -> f8E4M3FN` from the op's printed signature `: (!torch.vtensor<[3,5],f16>) -> !torch.vtensor<...>`."""
    if " -> " not in line:
        return ""
    operands, results = line.rsplit(" -> ", 1)
    signature = operands[operands.rfind(": (") :]
    inputs = [element for _, element in VTENSOR.findall(signature)]
    outputs = [element for _, element in VTENSOR.findall(results)]
    return f"{', '.join(inputs) or 'no tensors'} -> {', '.join(outputs) or 'no tensors'}"


def _attributes(line: str) -> str:
    found = ", ".join(f"{name} = {value.strip()}" for name, value in ATTRIBUTE.findall(line))
    return short(found, 120)


def _no_opset(text: str):
    if NO_OPSET not in text:
        return None
    return (
        Code.UNSUPPORTED_OP,
        None,
        "torch-mlir's ONNX conversion needs the model's ai.onnx opset version, and the model imports none "
        "(its ops are all of other domains, such as ai.onnx.ml or ai.onnx.preview.training)",
    )


def _importer(text: str):
    match = IMPORT_ERROR.search(text)
    if not match:
        return None
    message = match.group(1)
    element = UNKNOWN_ELEMENT.search(message)
    if element:
        number = int(element.group(1))
        return Code.ILLEGAL_TYPE, None, f"torch-mlir's ONNX importer has no MLIR type for ONNX element type {_element_name(number)} ({number})"
    typeproto = UNSUPPORTED_TYPEPROTO.search(message)
    if typeproto:
        return Code.ILLEGAL_TYPE, None, f"torch-mlir's ONNX importer has no type for an ONNX {typeproto.group(1)} value"
    container = CONTAINER_ELEMENT.search(message)
    if container:
        what = "sequence" if container.group(1) == "list" else "optional"
        return Code.ILLEGAL_TYPE, None, f"torch-mlir's ONNX importer has no type for a {what} of that element type (only tensors)"
    attribute = ATTRIBUTE_TYPE.search(text)
    if attribute:
        kind, name = attribute.groups()
        return Code.ILLEGAL_TYPE, None, f"torch-mlir's ONNX importer cannot import attribute '{name}' of type {kind}"
    order = NOT_TOPOLOGICAL.search(message)
    if order:
        what, name = order.groups()
        return (
            Code.COMPILER_ERROR,
            None,
            f"torch-mlir's ONNX importer met {what} '{name}' before the node producing it (it imports nodes in the order given)",
        )
    return Code.COMPILER_ERROR, None, f"torch-mlir's ONNX importer failed: {short(clean(message), 200)}"


def _element_name(number: int) -> str:
    try:
        from onnx import TensorProto

        return TensorProto.DataType.Name(number)
    except (ImportError, ValueError):
        return str(number)


def _checker(text: str):
    inferred = SHAPE_INFERENCE.search(text)
    if inferred:  # shapes the model declares that its nodes do not produce (the importer infers them first)
        return Code.VERIFIER_ERROR, None, f"onnx's shape inference rejects the model: {short(inferred.group(1), 200)}"
    match = CHECKER.search(text)
    if not match:
        return None
    node = CHECKED_NODE.search(text)
    op = f"onnx.{node.group(1)}" if node else None
    return Code.VERIFIER_ERROR, op, f"onnx's checker rejects the model{f' ({op})' if op else ''}: {short(match.group(1), 200)}"
