"""`torch`: the torch backend contract handed to IREE as is (IREE's own torch input)."""

from conformance.toolchain.iree import IreeBackend


class Torch(IreeBackend):
    name = "torch"
    description = "torch-mlir backend contract -> IREE (input type torch), llvm-cpu"
    pipeline = None  # IREE lowers the torch dialect itself
    iree_input_type = "torch"


BACKEND = Torch()
