"""torch.export failures: data-dependent control flow, unsupported constructs, non-tensor outputs.

Also PyTorch's own refusals in the import stage, which starts with
ExportedProgram.run_decompositions (functionalization, fake tensors) before
torch-mlir's FX importer sees anything: `parse_decompositions`.
"""

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
    # A dynamic dim reaching PyTorch code that needs a concrete size: a C++ accessor, or a Python check
    # that prints the symbolic size it got (`got Min(2, s26)`: s26 is the dim's symbol).
    (re.compile(r"(Cannot call \w+\(\) on tensor with symbolic sizes/strides|^(?:ValueError|TypeError): [^\n]*\bgot [^\n]*\bs\d+\b[^\n]*)", re.M),
     "PyTorch's code needs a concrete size where the dynamic dim is symbolic"),
    (re.compile(r"(Unsupported: [^\n]+)"), "a construct torch.export does not support"),
    (re.compile(r"((?:[Oo]utput|Expected .*output)[^\n]*(?:not a tensor|non-tensor|type)[^\n]*)"), "a non-tensor output"),
    (re.compile(r"(aten\.[\w.]+ (?:is not|has no) [^\n]+)"), "an op with no export support"),
]


# Tracing runs every op on fake tensors: an op with no fake (meta) kernel stops it. PyTorch says so
# itself ("aten::int_repr: attempted to run this operator with Meta tensors, but there was no fake
# impl or Meta kernel registered"), or, where it then falls back to the real kernel and that has no
# CPU kernel for fake inputs either, "could not find kernel for aten.int_repr.default at dispatch key".
NO_FAKE_KERNEL = [
    re.compile(r"(\w+)::(\w+): attempted to run this operator with Meta tensors, but there was no fake impl or Meta kernel"),
    re.compile(r"could not find kernel for (\w+)\.(\w+)\.\w+ at dispatch key"),
]
# A module attribute that is a TorchScript object (quantized packed parameters: LinearPackedParamsBase,
# Conv2dPackedParamsBase) must define __obj_flatten__ for torch.export to fake it.
SCRIPT_OBJECT = re.compile(r"__torch__\.torch\.classes\.([\w.]+) \(of Python compilation unit[^)]*\) does not have a field with name '__obj_flatten__'")


# An op's fake (meta) kernel that exists but raises on the traced inputs: resize_ of a tensor with a
# dynamic dim ("tried to directly modify sizes for customized tensor"). FakeTensor logs which op it was.
META_FAILED = re.compile(r"failed while attempting to run meta for aten\.(\w+)")
# PyTorch's own consistency check failing ("INTERNAL ASSERT FAILED at ..., please report a bug to
# PyTorch"); the FX interpreter names the node it was executing.
INTERNAL_ASSERT = re.compile(r"INTERNAL ASSERT FAILED at [^\n]*?please report a bug to PyTorch\.?([^\n]*)")
EXECUTING = re.compile(r"While executing %\w+ : [^\n]*?target=torch\.ops\.aten\.(\w+)")
TRACERS = {"export": "torch.export", "import": "PyTorch's run_decompositions (before torch-mlir's import)"}


def parse(stage: str, text: str):
    if stage not in ("export", "import"):
        return None
    for pattern in NO_FAKE_KERNEL:
        match = pattern.search(text)
        if match:
            op = f"{match.group(1)}.{match.group(2)}"
            return Code.EXPORT_UNSUPPORTED, op, (
                f"torch.export cannot trace {op}: PyTorch registers no fake (meta) kernel for it, "
                "so it cannot run on the fake tensors export traces with"
            )
    script_object = SCRIPT_OBJECT.search(text)
    if script_object:
        return Code.EXPORT_UNSUPPORTED, None, (
            f"torch.export cannot trace the module's TorchScript object torch.classes.{script_object.group(1)} "
            "(quantized packed parameters): its class defines no __obj_flatten__, which export needs to fake it"
        )
    if stage != "export":
        return _pytorch_failure(stage, text)
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
    found = _pytorch_failure(stage, text)
    if found:
        return found
    first = next((l.strip() for l in text.splitlines() if l.strip()), "")
    if first.startswith("torch."):  # torch's own exception types; anything else is a bug to look at (UNKNOWN)
        return Code.EXPORT_UNSUPPORTED, _op(text), f"torch.export failed: {short(first.split(': ', 1)[-1], 250)}"
    return None


def _pytorch_failure(stage: str, text: str):
    """PyTorch's own code failing while tracing (after the known reasons above had their say): an op's fake
    kernel raising on the traced inputs, or an internal assert."""
    meta = META_FAILED.search(text)
    if meta:
        op, error = f"aten.{meta.group(1)}", _first_error(text)
        return Code.EXPORT_UNSUPPORTED, op, (
            f"{TRACERS[stage]} cannot trace {op}: its fake (meta) kernel fails on the traced inputs ({short(error, 200)})"
        )
    internal = INTERNAL_ASSERT.search(text)
    if internal:
        executing = EXECUTING.search(text)
        op = f"aten.{executing.group(1)}" if executing else _op(text)
        said = internal.group(1).strip().rstrip("')\"").strip()  # what the assert says after the boilerplate
        return Code.EXPORT_UNSUPPORTED, op, (
            f"{TRACERS[stage]} fails an internal assert of PyTorch's{f' at {op}' if op else ''}: a PyTorch bug"
            + (f" ({short(said, 200)})" if said else "")
        )
    return None


def _first_error(text: str) -> str:
    """The first `SomethingError: message` line of a traceback's text, or its first line."""
    match = re.search(r"^\w*(?:Error|Exception): ([^\n]+)", text, re.M)
    return match.group(1) if match else next((l.strip() for l in text.splitlines() if l.strip()), "")


def _op(text: str) -> str | None:
    match = re.search(r"\baten\.([a-z_0-9]+)(?:\.\w+)?", text)
    return f"aten.{match.group(1)}" if match else None


# Functionalization (run_decompositions) refuses an op outside ATen whose output aliases an input:
# "Found a custom (non-ATen) operator whose output has alias annotations: prims::view_of(Tensor(a) a) -> Tensor(a)".
ALIASING_CUSTOM_OP = re.compile(r"custom \(non-ATen\) operator whose output has alias annotations: (\w+)::(\w+)\(")


# A decomposition (from the table torch-mlir asks for) that needs a size the input data decides:
# "GuardOnDataDependentSymNode: ... Caused by: (_decomp/decompositions.py:6002 in take)".
DATA_DEPENDENT_DECOMPOSITION = re.compile(
    r"(?:GuardOnDataDependentSymNode|Could not guard on data-dependent)[\s\S]*?Caused by: \(_decomp/decompositions\.py:\d+ in (\w+)\)"
)


def parse_decompositions(stage: str, text: str):
    """PyTorch's refusals while decomposing the exported program (the first step of the import stage)."""
    if stage != "import":
        return None
    data_dependent = DATA_DEPENDENT_DECOMPOSITION.search(text)
    if data_dependent:
        op = f"aten.{data_dependent.group(1)}"
        return Code.EXPORT_UNSUPPORTED, op, (
            f"PyTorch's decomposition of {op} (run_decompositions, before torch-mlir's import) cannot trace the case: "
            "it needs a size that depends on the input data"
        )
    aliasing = ALIASING_CUSTOM_OP.search(text)
    if aliasing:
        op = f"{aliasing.group(1)}.{aliasing.group(2)}"
        return Code.UNSUPPORTED_OP, op, (
            f"PyTorch's functionalization (run_decompositions, before torch-mlir's import) cannot take {op}: "
            "an op outside ATen whose output aliases its input (an alias annotation such as Tensor(a))"
        )
    return None
