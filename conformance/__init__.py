"""conformance: backend-contract conformance tests for PyTorch-to-MLIR compilers.

The public API for content authors:
  - cases:    `op`, `model`, `T`, `Dyn`, `Case`  (see conformance.cases)
  - backends: `Backend`, `CaseRun`, `StageFailure`, `shared`, `batched`
"""

from conformance.backends.protocol import Backend, CaseRun, StageFailure, batched, shared
from conformance.cases import Case, Dyn, T, model, op

__all__ = ["Backend", "Case", "CaseRun", "Dyn", "StageFailure", "T", "batched", "model", "op", "shared"]
