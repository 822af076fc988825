"""`linalg`: torch-mlir's linalg-on-tensors lowering, compiled and run by IREE.

torch-mlir's linalg-on-tensors contract is linalg, arith, scf... plus TMTensor
(`tm_tensor.scatter`, `.sort`, `.scan`, `.topk`, `.attention`): ops linalg
cannot express. IREE converts those to its LinalgExt only under its `tm_tensor`
input type (its torch plugin's TMTensor-to-LinalgExt pass): under `none` they
fail to compile as "failed to legalize operation 'tm_tensor.scatter'".

The contract keeps the ops torch-mlir's own linalg-on-tensors e2e config
(torch_mlir_e2e_test/configs/fx_importer_backend.py, BACKEND_LEGAL_OPS)
keeps backend-legal: TorchToLinalg lowers them directly, while their
decomposition is partial (aten.adaptive_max_pool2d decomposes to a
max_pool2d with `runtime.assert false` for sizes that do not divide, then
an invalid tensor.cast).
"""

from conformance.backends.protocol import CaseRun, shared
from conformance.toolchain.iree import IreeBackend
from conformance.toolchain.torch_mlir import TorchMlirBackend

# As torch-mlir's FxImporterTestConfig passes them for output_type linalg-on-tensors.
BACKEND_LEGAL_OPS = ("aten.adaptive_max_pool2d",)


class Linalg(IreeBackend):
    name = "linalg"
    description = "torch-mlir linalg-on-tensors -> IREE (input type tm_tensor), llvm-cpu"
    pipeline = "torch-backend-to-linalg-on-tensors-backend-pipeline"
    iree_input_type = "tm_tensor"

    # Another contract than the other torch-mlir backends' (it keeps BACKEND_LEGAL_OPS): another key.
    @shared("contract:linalg-backend-legal-ops")
    def contract(self, module, case_run: CaseRun):
        return TorchMlirBackend.contract(self, module, case_run)

    def contract_options(self, case_run: CaseRun) -> str:
        return f" backend-legal-ops={','.join(BACKEND_LEGAL_OPS)} extra-library="


BACKEND = Linalg()
