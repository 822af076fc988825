"""`tosa-selective`: torch-mlir's TOSA lowering with chosen ops kept as tosa.custom (RFC #1519's flow).

`--custom-ops=aten.layer_norm,aten.gelu` picks the ops (default: those two);
the option is this backend's own (SelectiveBackend.options), accepted when
`--backend` names it.
The kept ops are backend-legal for torch-mlir, become tosa.custom under
contract v1, and everything else is lowered by torch-mlir's TOSA pipeline.
IREE cannot execute tosa.custom, so the module is cut at its custom ops:
the TOSA segments run on IREE, the custom ops on ATen. Not in the nightly
matrix: what it checks depends on --custom-ops.
"""

from conformance.custom_ops.selective import SelectiveBackend


class TosaSelective(SelectiveBackend):
    name = "tosa-selective"


BACKEND = TosaSelective()
