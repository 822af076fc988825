"""`onnx-tosa`: ONNX through torch-mlir's ONNX importer, TOSA, compiled and run by IREE."""

from conformance.toolchain.onnx import OnnxIreeBackend


class OnnxTosa(OnnxIreeBackend):
    name = "onnx-tosa"
    description = "ONNX (torch.onnx.export, or the case's model) -> torch-mlir TOSA -> IREE (input type tosa), llvm-cpu"
    pipeline = "torch-backend-to-tosa-backend-pipeline"
    iree_input_type = "tosa"
    generic_form = True  # IREE 3.13 fails to parse torch-mlir's pretty-printed TOSA


BACKEND = OnnxTosa()
