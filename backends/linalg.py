"""`linalg`: torch-mlir's linalg-on-tensors lowering, compiled and run by IREE."""

from conformance.toolchain.iree import IreeBackend


class Linalg(IreeBackend):
    name = "linalg"
    description = "torch-mlir linalg-on-tensors -> IREE (input type none), llvm-cpu"
    pipeline = "torch-backend-to-linalg-on-tensors-backend-pipeline"
    iree_input_type = "none"


BACKEND = Linalg()
