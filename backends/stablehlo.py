"""`stablehlo`: torch-mlir's StableHLO lowering, compiled and run by IREE."""

from conformance.toolchain.iree import IreeBackend
from conformance.toolchain.lowerings import STABLEHLO


class StableHlo(IreeBackend):
    name = "stablehlo"
    lowering = STABLEHLO


BACKEND = StableHlo()
