"""`tosa`: torch-mlir's TOSA lowering, compiled and run by IREE."""

from conformance.toolchain.iree import IreeBackend
from conformance.toolchain.lowerings import TOSA


class Tosa(IreeBackend):
    name = "tosa"
    lowering = TOSA


BACKEND = Tosa()
