"""`onnx-linalg`: ONNX through torch-mlir's ONNX importer, linalg-on-tensors, compiled and run by IREE."""

from conformance.toolchain.onnx import OnnxIreeBackend


class OnnxLinalg(OnnxIreeBackend):
    name = "onnx-linalg"
    description = "ONNX (torch.onnx.export, or the case's model) -> torch-mlir linalg-on-tensors -> IREE (input type tm_tensor), llvm-cpu"
    pipeline = "torch-backend-to-linalg-on-tensors-backend-pipeline"
    # Not `none`: torch-mlir's linalg output keeps tm_tensor ops (scatter, sort, topk) for IREE to lower.
    iree_input_type = "tm_tensor"


BACKEND = OnnxLinalg()
