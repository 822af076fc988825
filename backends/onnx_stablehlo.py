"""`onnx-stablehlo`: ONNX through torch-mlir's ONNX importer, StableHLO, compiled and run by IREE."""

from conformance.toolchain.lowerings import STABLEHLO
from conformance.toolchain.onnx import OnnxIreeBackend


class OnnxStableHlo(OnnxIreeBackend):
    name = "onnx-stablehlo"
    lowering = STABLEHLO


BACKEND = OnnxStableHlo()
