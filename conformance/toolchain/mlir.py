"""Running torch-mlir pass pipelines with every diagnostic kept.

torch-mlir's own helper swaps sys.stderr and writes a repro file into /tmp;
here the diagnostics go into the exception (and from there into the
Result), and the reproducer is the caller's business (see bundles).
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

TORCH_MLIR_OPT = "torch-mlir-opt"
# A pattern rewriter caught in a loop re-emits one diagnostic without end
# (torch-mlir on a 0-d softmax). Past this many they are written to stderr,
# the stage's log, where the supervisor sees the flood and stops the stage,
# instead of filling this process's memory.
KEPT_DIAGNOSTICS = 10_000
# The line the torch-mlir lower stage appends to a failed conversion's
# diagnostics, naming the torch ops left in the module (read by the classifier).
UNCONVERTED = "torch ops left unconverted:"
# What the lower stage appends when the op a conversion gave up on had a dynamic dim: how its
# static twin fared (toolchain/torch_mlir.py with_static_twin), followed by "lowers" or "fails ... too".
STATIC_TWIN_SIZE = 2  # the same for every dim: broadcasts between dynamic dims stay valid
STATIC_TWIN = f"static twin (each dynamic dim made {STATIC_TWIN_SIZE}):"
# Ops MLIR may name when a conversion fails though they are only operands of the op it could not
# convert (a scalar constant, masked_select's boolean mask as a tensor literal): then the lower stage
# appends UNCONVERTED.
LEFT_OPERANDS = ("torch.constant.", "torch.vtensor.literal")


class PipelineError(Exception):
    """A pass pipeline failed; `diagnostics` holds everything MLIR said."""

    def __init__(self, pipeline: str, diagnostics: str):
        # The pipeline is named first: parsers read the target dialect from it.
        super().__init__(f"torch-mlir pipeline {pipeline} failed:\n{diagnostics}")
        self.pipeline = pipeline
        self.diagnostics = diagnostics


def run_pipeline(operation, pipeline: str) -> list[str]:
    """Run `pipeline` on `operation` in place; return the warnings; raise PipelineError on failure.

    Errors are taken as they are emitted (`emit_error_diagnostics`) rather
    than collected by the bindings until the pass manager returns, which a
    looping pass never does; the text is the one the bindings' MLIRError
    would show, so the parsers read the same thing either way.
    """
    from torch_mlir import ir
    from torch_mlir.passmanager import PassManager

    errors: list[str] = []
    notes: list[str] = []

    def keep(diagnostic) -> bool:
        if diagnostic.severity == ir.DiagnosticSeverity.ERROR:
            kept, text = errors, error_text(diagnostic)
        else:
            kept, text = notes, f"{diagnostic.location}: {diagnostic.severity}: {diagnostic.message}"
        if len(errors) + len(notes) < KEPT_DIAGNOSTICS:
            kept.append(text)
        else:
            os.write(2, f"{text}\n".encode())
        return True

    context = operation.context
    with context:
        emitted = context.emit_error_diagnostics
        context.emit_error_diagnostics = True
        handler = context.attach_diagnostic_handler(keep)
        try:
            PassManager.parse(pipeline).run(operation)
        except ir.MLIRError as e:
            head = f"{e}:" if errors else str(e)
            raise PipelineError(pipeline, "\n".join([head, *errors, *notes])) from None
        finally:
            handler.detach()
            context.emit_error_diagnostics = emitted
    return notes


def run_pipeline_together(operations: list, pipeline: str) -> list:
    """Each of `operations` after `pipeline`, as copies, from one run of it over all of them together.

    A pipeline run has a fixed cost apart from the IR it rewrites: torch-mlir's
    shape refinement parses its whole shape library on each run (twice in the
    ONNX contract: 75 of the 80 ms one op's contract takes). A module holding
    the functions of several cases pays it once. Only single-function modules
    without resources are merged (each function renamed while they share the
    module, its name given back after): a pipeline's passes rewrite one
    function as they would alone, so each copy prints as its own run would.
    Any other module runs alone. Raises PipelineError when the joint run (or a
    lone one) fails: which member is to blame is the caller's to find out.
    """
    from torch_mlir import ir
    from torch_mlir.dialects import torch as torch_dialect

    if len(operations) == 1:
        alone = operations[0].clone()
        run_pipeline(alone, pipeline)
        return [alone]
    context = ir.Context()
    torch_dialect.register_dialect(context)
    with context, ir.Location.unknown():
        texts = [op.get_asm(enable_debug_info=True) for op in operations]
        modules = [ir.Module.parse(text).operation for text in texts]
        joint = ir.Module.create()
        names = {}  # index -> the function's own name
        for index, module in enumerate(modules):
            if _mergeable(module, texts[index]):
                function = module.regions[0].blocks[0].operations[0].operation.clone(ip=ir.InsertionPoint(joint.body))
                names[index] = function.attributes["sym_name"]
                function.attributes["sym_name"] = ir.StringAttr.get(f"together_{index}")
        if names:
            run_pipeline(joint.operation, pipeline)
            functions = {str(op.operation.attributes["sym_name"]).strip('"'): op.operation for op in joint.body.operations}
            if len(functions) != len(names) or len(functions) != len(joint.body.operations):
                names = {}  # the pipeline left something else at the top: each runs alone, as it would have
        for index, module in enumerate(modules):
            if index in names:
                module = ir.Module.create(loc=module.location).operation
                function = functions[f"together_{index}"].clone(ip=ir.InsertionPoint(module.regions[0].blocks[0]))
                function.attributes["sym_name"] = names[index]
                modules[index] = module
            else:
                run_pipeline(module, pipeline)
    return modules


def _mergeable(module, text: str) -> bool:
    """A module of one function and nothing else: no module attributes, no resources (whose names could clash)."""
    body = module.regions[0].blocks[0].operations
    return len(body) == 1 and body[0].operation.name == "func.func" and len(module.attributes) == 0 and "{-#" not in text


def error_text(diagnostic) -> str:
    """An error diagnostic and its notes, spelled as the bindings' MLIRError spells them."""
    lines = [f"error: {bare(diagnostic.location)}: {diagnostic.message}"]
    lines += [f" note: {bare(note.location)}: {note.message}" for note in diagnostic.notes]
    return "\n".join(lines)


def bare(location) -> str:
    """`loc("x.py":7:0)` -> `"x.py":7:0`."""
    text = str(location)
    return text[4:-1] if text.startswith("loc(") and text.endswith(")") else text


def walk(operation):
    """`operation` and every op nested in it, outermost first."""
    yield operation
    for region in operation.regions:
        for block in region.blocks:
            for op in block.operations:
                yield from walk(op.operation)


# An op's name where a line states one: `%0 = tosa.clamp ...`, `"tosa.clamp"(%0) ...`, `linalg.yield %9`.
_OP_HEAD = re.compile(r'^\s*(?:%[\w#:, %]+=\s*)?"?([a-z_]\w*\.[\w.]*\w)"?[\s(<{:]', re.MULTILINE)
# The ops every lowered module has, whatever it computes: never the answer to "what did this op lower to".
_SCAFFOLDING = {
    "builtin.module", "func.func", "func.return", "arith.constant", "tensor.empty", "linalg.yield",
    "tosa.const", "tosa.const_shape", "tosa.yield", "stablehlo.constant", "stablehlo.return",
}


def computing_ops(text: str) -> list[str]:
    """The distinct ops an MLIR module's text computes with, in order of first appearance (no scaffolding)."""
    return [op for op in dict.fromkeys(_OP_HEAD.findall(text)) if op not in _SCAFFOLDING]


def opt_command(pipeline: str, input_path: Path | str) -> list[str]:
    """The public-tool command that replays `pipeline` on the IR in `input_path`."""
    return [TORCH_MLIR_OPT, f"--pass-pipeline={pipeline}", str(input_path)]


def write_ir(operation, path: Path, generic: bool = False) -> Path:
    """Print `operation` to `path` without building the text in memory (models are large).

    As bytes: the printer's UTF-8 goes to the file as it is, not decoded and encoded again
    (a model's weights print as hundreds of MB of hex; 10-25 % less time, measured on 100 MB)."""
    with open(path, "wb") as f:
        operation.print(file=f, binary=True, print_generic_op_form=generic, large_elements_limit=None)
    return path


def write_ir_once(operation, case_run, name: str, generic: bool = False) -> Path:
    """`operation` printed to `case_run.workdir / name`, once per case run.

    The compile cache hashes this file and the compile stage then reads it:
    a model's IR runs to hundreds of megabytes, so it is printed only once.
    """
    path = case_run.notes.get(name)
    if path is None:
        path = case_run.notes[name] = write_ir(operation, case_run.workdir / name, generic)
    return path


def parse_ir(path: Path, pipeline: str | None):
    """The module printed to `path` (by write_ir) after `pipeline`, parsed back into torch-mlir's MLIR."""
    from torch_mlir import ir

    with parsing_context(pipeline), ir.Location.unknown():
        return ir.Module.parse(path.read_text()).operation


@functools.cache
def parsing_context(pipeline: str | None):
    """A torch-mlir context that parses what `pipeline` produces (one per process and pipeline).

    A fresh context knows the dialects torch-mlir registers, but not those a
    pass loads as it runs (stablehlo): running the pipeline once, on an empty
    module, loads them. That run may fail (there is nothing to lower); the
    dialects are loaded before any pass runs.
    """
    from torch_mlir import ir
    from torch_mlir.dialects import torch as torch_dialect
    from torch_mlir.passmanager import PassManager

    context = ir.Context()
    torch_dialect.register_dialect(context)
    context.load_all_available_dialects()
    if pipeline:
        with context:
            empty = ir.Module.parse("module {}")
            try:
                PassManager.parse(f"builtin.module({pipeline})").run(empty.operation)
            except ir.MLIRError:
                pass
    return context
