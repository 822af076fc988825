"""`onnx-tosa`: ONNX through torch-mlir's ONNX importer, TOSA, compiled and run by IREE."""

from conformance.toolchain.lowerings import TOSA
from conformance.toolchain.onnx import OnnxIreeBackend


class OnnxTosa(OnnxIreeBackend):
    name = "onnx-tosa"
    lowering = TOSA


BACKEND = OnnxTosa()
