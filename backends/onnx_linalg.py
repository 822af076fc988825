"""`onnx-linalg`: ONNX through torch-mlir's ONNX importer, linalg-on-tensors, compiled and run by IREE."""

from conformance.toolchain.lowerings import LINALG_ON_TENSORS
from conformance.toolchain.onnx import OnnxIreeBackend


class OnnxLinalg(OnnxIreeBackend):
    name = "onnx-linalg"
    lowering = LINALG_ON_TENSORS


BACKEND = OnnxLinalg()
