"""Whether a failure is news: does any shipped case already show it (a (code, op) pair of the backend's xfail set)?

The shipped sets list every known failure of the registry, the OpInfo
samples, torch-mlir's and ONNX's suites where they are covered, by the
(code, op) each fails with. A fuzz group whose pair is in its backend's
set is a failure somebody already wrote down; the others are new.
"""

from __future__ import annotations

from pathlib import Path

from conformance.xfail.sets import XfailSet


def known_pairs(xfail_dir: Path, backend: str) -> set[tuple[str, str | None]]:
    return {(e.code, e.op) for e in XfailSet.load(xfail_dir, backend).entries.values()}


def shown_by(pairs: set[tuple[str, str | None]], code: str, op: str | None) -> bool | None:
    """Known when a shipped case fails with this code on this op; None (cannot tell) for a failure that names
    no op even once shrunk: a code alone says too little to call two failures one."""
    if op is None:
        return None
    return (code, op) in pairs
