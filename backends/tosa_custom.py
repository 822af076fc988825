"""`tosa-custom`: the dummy all-ops-to-custom mode (torch-mlir RFC #1519's review).

Every torch.aten/torch.prims op becomes one tosa.custom under contract v1
(docs/custom-op-contract.md); an interpreter dispatches each back to ATen
and the outputs are compared with eager. Ops that cannot be converted fail
the case with CUSTOM_OP_UNCONVERTIBLE and the reason; `conformance
custom-audit` tabulates them per op.
"""

from conformance.custom_ops.backend import TosaCustomBackend


class TosaCustom(TosaCustomBackend):
    name = "tosa-custom"


BACKEND = TosaCustom()
