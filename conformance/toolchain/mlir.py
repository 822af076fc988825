"""Running torch-mlir pass pipelines with every diagnostic kept.

torch-mlir's own helper swaps sys.stderr and writes a repro file into /tmp;
here the diagnostics go into the exception (and from there into the
Result), and the reproducer is the caller's business (see bundles).
"""

from __future__ import annotations

from pathlib import Path

TORCH_MLIR_OPT = "torch-mlir-opt"


class PipelineError(Exception):
    """A pass pipeline failed; `diagnostics` holds everything MLIR said."""

    def __init__(self, pipeline: str, diagnostics: str):
        # The pipeline is named first: parsers read the target dialect from it.
        super().__init__(f"torch-mlir pipeline {pipeline} failed:\n{diagnostics}")
        self.pipeline = pipeline
        self.diagnostics = diagnostics


def run_pipeline(operation, pipeline: str) -> list[str]:
    """Run `pipeline` on `operation` in place; return the warnings; raise PipelineError on failure."""
    from torch_mlir import ir
    from torch_mlir.passmanager import PassManager

    notes: list[str] = []

    def keep(diagnostic) -> bool:
        notes.append(f"{diagnostic.location}: {diagnostic.severity}: {diagnostic.message}")
        return True

    context = operation.context
    with context:
        handler = context.attach_diagnostic_handler(keep)
        try:
            PassManager.parse(pipeline).run(operation)
        except ir.MLIRError as e:
            raise PipelineError(pipeline, "\n".join([str(e), *notes])) from None
        finally:
            handler.detach()
    return notes


def opt_command(pipeline: str, input_path: Path | str) -> list[str]:
    """The public-tool command that replays `pipeline` on the IR in `input_path`."""
    return [TORCH_MLIR_OPT, f"--pass-pipeline={pipeline}", str(input_path)]


def write_ir(operation, path: Path, generic: bool = False) -> Path:
    """Print `operation` to `path` without building the text in memory (models are large)."""
    with open(path, "w") as f:
        operation.print(file=f, print_generic_op_form=generic, large_elements_limit=None)
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
