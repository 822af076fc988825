"""`linalg`: torch-mlir's linalg-on-tensors lowering, compiled and run by IREE (TMTensor ops included)."""

from conformance.toolchain.iree import IreeBackend
from conformance.toolchain.lowerings import LINALG_ON_TENSORS


class Linalg(IreeBackend):
    name = "linalg"
    lowering = LINALG_ON_TENSORS


BACKEND = Linalg()
