"""torch-mlir's lowerings from its torch backend contract: the one table of what each needs.

Every backend built on torch-mlir names one of these (`lowering = TOSA`): the
torch-frontend and ONNX-frontend backend shells in backends/, the TOSA
reference model (toolchain/tosa_reference.py) and the selective mode
(custom_ops/selective.py). Classification reads the lowering a failed
pipeline belongs to from here too (classify/torch_mlir.py), by the pipeline
the diagnostic names. A fact about a lowering (its pipeline, how IREE takes
its output, which ops its contract keeps whole) is written here and nowhere
else.

IREE and tosa-tools are other builds of MLIR than torch-mlir's, so the IR
crosses to them as text: in MLIR's generic op form where their parsers
reject torch-mlir's pretty form.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Lowering:
    """One lowering: torch-mlir's pipeline from the backend contract, and how the tools after it read its output."""

    output_type: str  # torch-mlir's name for it (torch_mlir.compiler_utils.OutputType); explanations say "lower ... to <it>"
    human: str  # as backend descriptions name it: "torch-mlir TOSA -> IREE ..."
    pipeline: str | None  # the pass pipeline from the torch backend contract; None: the contract is the output
    iree_input_type: str  # iree-compile --iree-input-type
    generic_form: bool = False  # IREE and tosa-tools parse the output only printed in MLIR's generic op form
    # Ops the contract keeps whole (torchdynamo-export- and torch-onnx-to-torch-backend-pipeline's
    # `backend-legal-ops`), so the lowering converts them itself instead of their decomposition.
    backend_legal_ops: tuple[str, ...] = ()


# IREE lowers the torch dialect itself (its torch input plugin).
TORCH = Lowering("torch", "backend contract", None, "torch")

# torch-mlir's linalg-on-tensors contract is linalg, arith, scf... plus TMTensor
# (`tm_tensor.scatter`, `.sort`, `.scan`, `.topk`, `.attention`): ops linalg
# cannot express. IREE converts those to its LinalgExt only under its `tm_tensor`
# input type (its torch plugin's TMTensor-to-LinalgExt pass): under `none` they
# fail to compile as "failed to legalize operation 'tm_tensor.scatter'".
#
# The backend-legal ops are those torch-mlir's own linalg-on-tensors e2e config
# keeps (torch_mlir_e2e_test/configs/fx_importer_backend.py, BACKEND_LEGAL_OPS):
# TorchToLinalg lowers them directly, while their decomposition is partial
# (aten.adaptive_max_pool2d decomposes to a max_pool2d behind `runtime.assert
# false` for sizes that do not divide, then an invalid tensor.cast). The ONNX
# frontend's contract keeps them too: torch-onnx-to-torch-backend-pipeline takes
# the same option for the same decomposition pass (torch-mlir's
# lib/Dialect/Torch/Transforms/Passes.cpp), and ONNX's MaxRoiPool becomes
# aten.adaptive_max_pool2d, whose decomposition (a max_pool2d of dynamic sizes)
# linalg's lowering refuses.
LINALG_ON_TENSORS = Lowering(
    "linalg-on-tensors",
    "linalg-on-tensors",
    "torch-backend-to-linalg-on-tensors-backend-pipeline",
    "tm_tensor",
    backend_legal_ops=("aten.adaptive_max_pool2d",),
)

# IREE 3.13 fails to parse torch-mlir's pretty-printed TOSA.
TOSA = Lowering("tosa", "TOSA", "torch-backend-to-tosa-backend-pipeline", "tosa", generic_form=True)

STABLEHLO = Lowering("stablehlo", "StableHLO", "torch-backend-to-stablehlo-backend-pipeline", "stablehlo")

LOWERINGS = (TORCH, LINALG_ON_TENSORS, TOSA, STABLEHLO)


def named_in(pipeline: str) -> Lowering | None:
    """The lowering whose pass pipeline `pipeline` (a pipeline's text, e.g. `builtin.module(...)`) runs, or None."""
    for lowering in LOWERINGS:
        if lowering.pipeline and lowering.pipeline in pipeline:
            return lowering
    return None
