"""IREE: iree-compile diagnostics and runtime errors, the GPU targets' own among them."""

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
# A call that fails, or a later wait on its results or a mapping of them (reading an output back);
# iree-run-module (a run elsewhere: remote/) prints the status alone, after the line
# execution/remote_verdicts.py puts first.
RUNTIME = re.compile(
    r"(Error invoking function|synchronous fence failure|Could not map memory|iree-run-module exited with status \d+):"
    r"\s+(?:[\w/.<>]+:\d+: )?([A-Z_]+); ([^;\n]+)"
)
READING_BACK = ("synchronous fence failure", "Could not map memory")
# A check the compiled program makes, as the lowering that emitted it words it: "onnx.Expand input has ...".
CHECKING_OP = re.compile(r"((?:onnx|torch|tosa|stablehlo)\.[\w.]+) ")


# IREE's Python runtime reading an output whose element type has no NumPy dtype (complex<f16>: torch.chalf).
NO_NUMPY_DTYPE = "Unsupported VM Buffer -> numpy dtype mapping"


def parse(stage: str, text: str):
    if "iree-compile" in text:
        return _compile(text)
    if NO_NUMPY_DTYPE in text:
        return (
            Code.RUNTIME_ERROR,
            None,
            "IREE's Python runtime cannot read the output back: its element type has no NumPy dtype "
            f"(complex<f16>, torch.complex32, has none) ({NO_NUMPY_DTYPE})",
        )
    match = RUNTIME.search(text)
    if match:
        when, status, message = match.groups()
        reading = " reading an output back" if when in READING_BACK else ""
        op = CHECKING_OP.match(message)
        return Code.RUNTIME_ERROR, op and op.group(1), f"the IREE runtime failed{reading} ({status}): {short(message, 200)}"
    return None


CRASHED = re.compile(r"iree-compile killed by signal (\w+)")


def _compile(text: str):
    crashed = CRASHED.search(text)
    if crashed and not UNKNOWN_CHIP.search(text):
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
    skew = _unknown_chip(text)
    if skew:
        return skew
    line = error_line(text) or ""
    target_type = _type_the_target_lacks(text)
    if target_type:
        return target_type
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


# -- GPU targets -------------------------------------------------------------------

# The chip named is not one this iree-compile knows (rocm and vulkan say so; vulkan then crashes; cuda has no
# description of it). The backends refuse chips IREE 3.13 does not know, so this means IREE and our table disagree.
UNKNOWN_CHIP = re.compile(r"Unknown (ROCM|Vulkan|CUDA) target '([^']+)'|(missing GPU target) in #hal\.executable\.target")


def _unknown_chip(text: str):
    match = UNKNOWN_CHIP.search(text)
    if not match:
        return None
    kind, chip, missing = match.groups()
    crashed = CRASHED.search(text)
    then = f" and then crashed with {crashed.group(1)}" if crashed else ""
    what = f"the {kind.lower()} chip {chip!r}" if chip else "the chip it was asked for (missing GPU target)"
    return Code.TOOLCHAIN_SKEW, None, f"iree-compile does not know {what}{then}: name a chip this IREE compiles for"


# A GPU target describes what its chip computes on: `#iree_gpu.target<arch = "vp_android_baseline_2022", ...
# wgp = <compute = fp32|int32, storage = b32, ...`. Element types outside `compute` need a capability it lacks.
GPU_TARGET = re.compile(r'#hal\.executable\.target<"([\w-]+)".*?#iree_gpu\.target<arch = "([^"]+)".*?compute = ([\w|]+)')
COMPUTE_TYPE = {"fp64": "f64", "fp32": "f32", "fp16": "f16", "bf16": "bf16", "int64": "i64", "int32": "i32", "int16": "i16", "int8": "i8"}
# An element type standing alone, or ending a shape: `(i8, i8)`, `vector<4xi64>`, `memref<?xf64, ...>`.
ELEMENT_TYPE = re.compile(r"(?:(?<![\w.])|(?<=[\d?]x))u?(bf16|f16|f32|f64|i8|i16|i32|i64)(?!\w)")
SPIRV_TYPE = re.compile(r"failed to convert SPIR-V type: '([^']+)'")
# The source op a diagnostic points at: MLIR prints the line of the input below the error, `%5 = stablehlo.reduce(...`.
SOURCE_OP = re.compile(r"error: [^\n]*\n\s+(?:%[\w#:]+(?:,\s*%[\w#:]+)*\s*=\s*)?\"?([a-z_]+\.[a-z_][\w.]*)")
FUNCTIONS = {"func.func", "util.func"}  # where a whole dispatch failed: no op of the input to blame
# A dispatch needing more workgroup memory than the chip has (the target's max_workgroup_memory_bytes).
SHARED_MEMORY = re.compile(r"function '(\w+)' uses (\d+) bytes of shared memory; exceeded the limit of (\d+) bytes")


def _source_op(text: str) -> str | None:
    """The op of the input that the first located diagnostic points at (not the function around it)."""
    return next((m.group(1) for m in SOURCE_OP.finditer(text) if m.group(1) not in FUNCTIONS), None)


def _type_the_target_lacks(text: str):
    """A GPU target's code generation stopped at what its chip lacks: an element type it does not compute on
    (f64, i64, i8 on a baseline Vulkan device), or workgroup memory."""
    target = GPU_TARGET.search(text)
    if not target:
        return None
    name, arch, compute = target.groups()
    lines = text.splitlines()
    first = next((i for i, l in enumerate(lines) if "error:" in l), None)
    if first is None:
        return None
    said = re.sub(r"^<unknown>:0:\s*", "", lines[first])
    op = _source_op(text)
    where = f" in {op}" if op else ""
    memory = SHARED_MEMORY.search(said)
    if memory:
        dispatch, needed, limit = memory.groups()
        return Code.COMPILER_ERROR, op, (
            f"iree-compile's {name} code generation gave {dispatch}{where} {int(needed):,} bytes of workgroup memory, "
            f"over the {int(limit):,} bytes {arch} has"
        )
    # The types of the first failing op: its signature after the last " : " (on the error line, or on the
    # note naming the op that follows it), or the SPIR-V type it could not make.
    following = []
    for line in lines[first + 1 :]:
        if "error:" in line:
            break
        following.append(line)
    note = next((line for line in following if "see current operation" in line), "")
    spirv = SPIRV_TYPE.search(said)
    types = spirv.group(1) if spirv else (said if " : " in said else note).rpartition(" : ")[2]
    has = {COMPUTE_TYPE[c] for c in compute.split("|") if c in COMPUTE_TYPE}
    lacking = [t for t in dict.fromkeys(ELEMENT_TYPE.findall(types)) if t not in has]
    if not lacking:
        return None
    return Code.ILLEGAL_TYPE, op, (
        f"iree-compile cannot compile {'/'.join(lacking)}{where} for {name} ({arch} computes on {compute.replace('|', ', ')}): "
        f"{short(clean(said), 160)}"
    )
