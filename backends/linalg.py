"""`linalg`: torch-mlir's linalg-on-tensors lowering, compiled and run by IREE.

torch-mlir's linalg-on-tensors contract is linalg, arith, scf... plus TMTensor
(`tm_tensor.scatter`, `.sort`, `.scan`, `.topk`, `.attention`): ops linalg
cannot express. IREE converts those to its LinalgExt only under its `tm_tensor`
input type (its torch plugin's TMTensor-to-LinalgExt pass): under `none` they
fail to compile as "failed to legalize operation 'tm_tensor.scatter'".
"""

from conformance.toolchain.iree import IreeBackend


class Linalg(IreeBackend):
    name = "linalg"
    description = "torch-mlir linalg-on-tensors -> IREE (input type tm_tensor), llvm-cpu"
    pipeline = "torch-backend-to-linalg-on-tensors-backend-pipeline"
    iree_input_type = "tm_tensor"


BACKEND = Linalg()
