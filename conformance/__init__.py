"""conformance: backend-contract conformance tests for PyTorch-to-MLIR compilers.

The public API for content authors:
  - cases:    `op`, `model`, `T`, `Dyn`, `Exact`, `Stored`, `Case`  (see conformance.cases)
  - backends: `Backend`, `CaseRun`, `StageFailure`, `shared`, `batched`

They are imported on first use: both import torch, and the pytest plugin
(loaded by every pytest run) and `conformance --help` must not.
"""

from __future__ import annotations

import importlib

_HOMES = {
    **dict.fromkeys(["Backend", "CaseRun", "StageFailure", "batched", "shared"], "conformance.backends.protocol"),
    **dict.fromkeys(["Case", "Dyn", "Exact", "Stored", "T", "model", "op"], "conformance.cases"),
}

__all__ = sorted(_HOMES)


def __getattr__(name: str):
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'conformance' has no attribute {name!r}")
