"""torch-mlir pipelines: legalization failures, illegal types, dynamic shapes, verifier errors."""

from __future__ import annotations

import re

from conformance.classify.text import clean, current_op, error_line, short
from conformance.dtypes import VTENSOR
from conformance.taxonomy import Code
from conformance.toolchain import lowerings
from conformance.toolchain.mlir import LEFT_OPERANDS, STATIC_TWIN, UNCONVERTED

# A torch-mlir pass pipeline failed: the framework's PipelineError names the pipeline; the bindings'
# MLIRError, as a backend lets it escape, says only this; torch-mlir's own TorchMlirCompilerError
# says it too, and names the pipeline in its torch-mlir-opt reproducer.
PIPELINE_FAILED = re.compile(r"torch-mlir pipeline .* failed:$|Failure while executing pass pipeline", re.M)
PIPELINE = re.compile(r"torch-mlir pipeline (.*) failed:$|-pass-pipeline='([^']*)'", re.M)
LEGALIZE = re.compile(r"failed to legalize operation '(torch\.[\w.]+)'")
CONTRACT_ILLEGAL = re.compile(r"found an op that was marked as backend illegal|unsupported by backend contract", re.I)
# What a pattern says before giving up on a type: "only floating-point datatype
# legalization supported for AtenReciprocalOp", "unsupported element type", ...
TYPE_RESTRICTION = re.compile(
    r"error: [^\n]*?(only [\w -]*(?:datatype|dtype|element type)[^\n]*|unsupported (?:element |data ?)?type[^\n]*|[^\n]*(?:datatype|dtype)[^\n]* not supported[^\n]*)"
)
# The FX importer's own refusals, e.g. its as_strided rewrite given symbolic sizes
# (`size`, `storage_offset`, or the shape of the tensor it views, `base.shape`).
IMPORTER_STATIC = re.compile(r"(aten\.\w+)(?:\.\w+)? `([\w.]+)` must be (?:a )?static")
# A graph node the FX importer has no import for: `target=<function sym_float at 0x...>`
# (a Python function of symbolic sizes) or `target=aten.foo.default`; the node's meta
# follows, naming the ATen op the node came from.
IMPORTER_UNIMPLEMENTED = re.compile(r"Unimplemented call_function: target=(?:<function (\w+)|<built-in function (\w+)|([\w.]+))")
ORIGINAL_ATEN = re.compile(r"'original_aten': <OpOverload\(op='(aten\.\w+)'")
TWIN_FAILS_TOO = re.compile(rf"^{re.escape(STATIC_TWIN)} fails", re.M)
UNCONVERTED_OPS = re.compile(rf"^{re.escape(UNCONVERTED)} (.+)$", re.M)
# The function itself is illegal in the target: its signature holds non-tensor values (a forward
# returning Python scalars), which the TOSA and linalg backend contracts do not take.
FUNCTION_SIGNATURE = re.compile(r"failed to legalize operation 'func\.func'[^\n]*?function_type = \(([^)]*)\) -> \(?(.*?)\)?, sym_name")


def target_of(text: str) -> str:
    """What the failed pipeline lowers to: a lowering's output type, else (a contract pipeline) the torch backend contract."""
    match = PIPELINE.search(text)
    if match:
        lowering = lowerings.named_in(match.group(1) or match.group(2))
        return lowering.output_type if lowering else "the torch backend contract"
    return "the target dialect"


# Any other failure of the importer on a node: ImporterError names the node and its op.
IMPORTER_NODE = re.compile(r"torch-mlir's FX importer failed on node (\S+) \(([\w.]+)\): (\w+): (.*)")
IMPORTER_UNSUPPORTED = re.compile(r"not supported|unsupported|not implemented|NotImplementedError|Unimplemented", re.I)


def parse_import(stage: str, text: str):
    """torch_mlir.fx's importer (stage `import`), before any pipeline runs."""
    if stage != "import":
        return None
    return _importer_refusal(text) or _importer_failure(text) or _importer_dtype(text)


# The importer's dtype table lacks the dtype of a value in the graph: a bare KeyError naming it.
IMPORTER_DTYPE = re.compile(r"^KeyError: torch\.(\w+)\s*$", re.MULTILINE)


def _importer_dtype(text: str):
    missing = IMPORTER_DTYPE.search(text)
    if not missing:
        return None
    return Code.ILLEGAL_TYPE, None, (
        f"torch-mlir's FX importer has no MLIR type for torch.{missing.group(1)}, a dtype of a value in the graph"
    )


def _importer_failure(text: str):
    """The importer failed on a node in a way no parser above knows: an assertion or a refusal of a construct."""
    failed = IMPORTER_NODE.search(text)
    if not failed:
        return None
    node, op, kind, message = failed.groups()
    said = short(clean(f"{kind}: {message}"), 200)
    if "Heterogeneous lists" in message:
        said += " (a list argument holds a constant tensor frozen into the program, e.g. a buffer of positions, beside graph values)"
    if IMPORTER_UNSUPPORTED.search(f"{kind}: {message}"):
        return Code.UNSUPPORTED_OP, op, f"torch-mlir's FX importer cannot import {op} as the graph uses it (node {node}): {said}"
    return Code.COMPILER_ERROR, op, f"torch-mlir's FX importer fails on {op} (node {node}): {said}"


def _importer_refusal(text: str):
    static = IMPORTER_STATIC.search(text)
    if static:
        op, argument = static.groups()
        return Code.DYNAMIC_SHAPE_UNSUPPORTED, op, (
            f"torch-mlir's FX importer cannot import {op} with a dynamic `{argument}`: "
            f"{short(clean(error_line(text) or static.group(0)), 200)}"
        )
    unimplemented = IMPORTER_UNIMPLEMENTED.search(text)
    if unimplemented:
        function, builtin, target = unimplemented.groups()
        origin = ORIGINAL_ATEN.search(text)
        source = f" (made from {origin.group(1)})" if origin else ""
        if function or builtin:
            name = function or builtin
            op = f"torch.{name}" if name.startswith("sym_") else name
            if name.startswith("sym_"):
                # torch.export emits sym_* calls only for symbolic sizes: a dynamic shape the importer cannot carry.
                return Code.DYNAMIC_SHAPE_UNSUPPORTED, op, (
                    f"torch-mlir's FX importer cannot import {op}, a computation on a symbolic (dynamic) size{source}"
                )
            return Code.UNSUPPORTED_OP, op, f"torch-mlir's FX importer has no import for the Python call {name}{source}"
        op = ".".join(target.split(".")[:2])
        return Code.UNSUPPORTED_OP, op, f"torch-mlir's FX importer has no import for {target}{source}"
    return None


def parse(stage: str, text: str):
    if not PIPELINE_FAILED.search(text):
        return None
    target = target_of(text)
    signature = FUNCTION_SIGNATURE.search(text)
    if signature:
        scalars = [t.strip() for t in ",".join(signature.groups()).split(",") if t.strip() and not t.strip().startswith("tensor<")]
        if scalars:
            return Code.ILLEGAL_TYPE, None, (
                f"the {target} backend contract takes tensors only, and the case's function passes or returns "
                f"{', '.join(sorted(set(scalars)))} (Python scalars)"
            )
    legalize = LEGALIZE.search(text)
    if legalize and legalize.group(1) == "torch.operator":
        # The FX importer had no definition for the op and wrapped it generically.
        named = re.search(r'name = "torch\.([\w.]+)"', text)
        op = named.group(1) if named else None
        return (
            Code.UNSUPPORTED_OP,
            op,
            f"torch-mlir has no definition of {op or 'the op'} (imported as a generic torch.operator), so it cannot lower it to {target}",
        )
    if legalize and legalize.group(1).startswith(LEFT_OPERANDS):
        # A scalar constant or tensor literal left behind: the op that consumes it is the one not lowered.
        # The lower stage names the torch ops still in the module after the failure.
        left = UNCONVERTED_OPS.search(text)
        if left:
            ops = [name.removeprefix("torch.") for name in left.group(1).split(", ")]
            also = f" (also left: {', '.join(ops[1:])})" if len(ops) > 1 else ""
            return (
                Code.UNSUPPORTED_OP,
                ops[0],
                f"torch-mlir cannot lower {ops[0]} to {target}: the conversion left it in place{also}, "
                f"reported as its unconverted operand {legalize.group(1)}",
            )
        return (
            Code.UNSUPPORTED_OP,
            None,
            f"torch-mlir cannot lower the case to {target}: it left {legalize.group(1)} unconverted, "
            f"so an op using that {'literal' if legalize.group(1) == 'torch.vtensor.literal' else 'scalar'} was not lowered",
        )
    restriction = TYPE_RESTRICTION.search(text)
    if legalize and restriction:
        # The pattern said why it gave up before the generic failure: a type it does not take.
        op = legalize.group(1).removeprefix("torch.")
        types = sorted({element for _, element in VTENSOR.findall(_signature(text, legalize.group(1)))})
        got = f" (the case has {', '.join(types)})" if types else ""
        return Code.ILLEGAL_TYPE, op, f"torch-mlir's lowering of {op} to {target} rejects the element type{got}: {short(clean(restriction.group(0)), 160)}"
    if legalize:
        op = legalize.group(1).removeprefix("torch.")
        # A dynamic-shape helper op (aten.size.int, sym ops) failing means the dynamic case, not the op.
        line = next((clean(l) for l in text.splitlines() if legalize.group(1) in l and "error" in l), legalize.group(0))
        # The op fails with static dims too (integer relu has no lowering at all): not the dynamic dims' fault.
        dynamic = "?" in _types_of(text, legalize.group(1)) and not TWIN_FAILS_TOO.search(text)
        if op in ("aten.size.int", "aten.sym_size.int") or dynamic:
            return (
                Code.DYNAMIC_SHAPE_UNSUPPORTED,
                op,
                f"torch-mlir cannot lower {op} with dynamic dimensions to {target} ({short(line, 200)})",
            )
        return Code.UNSUPPORTED_OP, op, f"torch-mlir cannot lower {op} to {target} ({short(line, 200)})"
    if CONTRACT_ILLEGAL.search(text):
        line = next(clean(l) for l in text.splitlines() if CONTRACT_ILLEGAL.search(l))
        op = _first_torch_op(text)
        return Code.UNSUPPORTED_OP, op, f"the torch backend contract is not met{f' by {op}' if op else ''} ({short(line, 200)})"
    # Any other error with MLIR's "see current operation" note: an op the lowering
    # built is rejected by its own verifier (e.g. a concatenate with no operands).
    line = error_line(text)
    current = current_op(text)
    if line and (current or "failed to verify" in text or "verification failed" in text):
        op = _op_in(line) or current
        return (
            Code.VERIFIER_ERROR,
            op,
            f"torch-mlir's lowering to {target} built an invalid {op or 'op'}: {short(line, 200)}",
        )
    if line:  # a pass reported an error of its own (e.g. StableHLO shape inference while building an op)
        return Code.COMPILER_ERROR, _op_in(line), f"torch-mlir's lowering to {target} failed: {short(line, 200)}"
    return None


def _signature(text: str, op: str) -> str:
    """The operand and result types printed with the op in the diagnostic."""
    for line in text.splitlines():
        if op in line and ":" in line and "(" in line:
            return line[line.rindex(":") :] if "->" in line else line
    return ""


def _types_of(text: str, op: str) -> str:
    """The type signature printed after the op in the diagnostic (to spot '?' dims)."""
    for line in text.splitlines():
        if op in line and "->" in line:
            return line[line.index("->") :]
    return ""


def _first_torch_op(text: str) -> str | None:
    match = re.search(r"torch\.(aten|prims)\.[\w.]+", text)
    return match.group(0).removeprefix("torch.") if match else None


def _op_in(line: str) -> str | None:
    match = re.search(r"'([\w]+\.[\w.]+)' op", line)
    return match.group(1) if match else None
