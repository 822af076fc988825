"""`onnx-stablehlo`: ONNX through torch-mlir's ONNX importer, StableHLO, compiled and run by IREE."""

from conformance.toolchain.onnx import OnnxIreeBackend


class OnnxStableHlo(OnnxIreeBackend):
    name = "onnx-stablehlo"
    description = "ONNX (torch.onnx.export, or the case's model) -> torch-mlir StableHLO -> IREE (input type stablehlo), llvm-cpu"
    pipeline = "torch-backend-to-stablehlo-backend-pipeline"
    iree_input_type = "stablehlo"


BACKEND = OnnxStableHlo()
