"""`torch`: the torch backend contract handed to IREE as is (IREE's own torch input)."""

from conformance.toolchain.iree import IreeBackend
from conformance.toolchain.lowerings import TORCH


class Torch(IreeBackend):
    name = "torch"
    lowering = TORCH


BACKEND = Torch()
