"""`stablehlo`: torch-mlir's StableHLO lowering, compiled and run by IREE."""

from conformance.toolchain.iree import IreeBackend


class StableHlo(IreeBackend):
    name = "stablehlo"
    description = "torch-mlir StableHLO -> IREE (input type stablehlo), llvm-cpu"
    pipeline = "torch-backend-to-stablehlo-backend-pipeline"
    iree_input_type = "stablehlo"


BACKEND = StableHlo()
