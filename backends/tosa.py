"""`tosa`: torch-mlir's TOSA lowering, compiled and run by IREE."""

from conformance.toolchain.iree import IreeBackend


class Tosa(IreeBackend):
    name = "tosa"
    description = "torch-mlir TOSA -> IREE (input type tosa), llvm-cpu"
    pipeline = "torch-backend-to-tosa-backend-pipeline"
    iree_input_type = "tosa"
    generic_form = True  # IREE 3.13 fails to parse torch-mlir's pretty-printed TOSA


BACKEND = Tosa()
