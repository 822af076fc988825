"""Comparing a backend's outputs with eager: structure, dtype, shape, NaNs, values.

The first difference found decides the code, in that order, because each
later check is meaningless once an earlier one fails. Tolerances default to
torch.testing's per-dtype ones.

    structure.py  how many outputs, and how they are nested
    values.py     deterministic outputs: NaNs in the same places, values within tolerances
    mismatch.py   the Mismatch, and how numbers are spelled in explanations
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from conformance.compare.mismatch import Mismatch, as_tensor, describe
from conformance.compare.structure import pair_outputs
from conformance.compare.values import compare_values
from conformance.taxonomy import Code

__all__ = ["Mismatch", "compare", "describe"]

# Nondeterministic cases (dropout, rand) are judged on statistics: each of
# mean, standard deviation and share of zeros may move by this fraction of
# eager's standard deviation (zeros: absolute share).
STATISTIC_TOLERANCE = 0.1


def compare(
    expected: Any,
    actual: Any,
    *,
    rtol: float | None = None,
    atol: float | None = None,
    statistical: bool = False,
    label: str = "output",
) -> Mismatch | None:
    """None when `actual` matches `expected`, else the first Mismatch found; `label` names what is compared."""
    pairs, mismatch = pair_outputs(expected, actual, label)
    if mismatch:
        return mismatch
    for path, e, a in pairs:
        mismatch = _compare_leaf(path, e, a, rtol, atol, statistical)
        if mismatch:
            return mismatch
    return None


def _compare_leaf(path, e, a, rtol, atol, statistical) -> Mismatch | None:
    if e is None or a is None:
        if e is None and a is None:
            return None
        return Mismatch(Code.STRUCTURE_MISMATCH, f"{path}: eager gives {describe(e)}, the backend {describe(a)}")
    te, ta = as_tensor(e), as_tensor(a)
    if te is None or ta is None:
        if e == a:
            return None
        return Mismatch(Code.STRUCTURE_MISMATCH, f"{path}: eager gives {e!r}, the backend {a!r}")
    # A Python scalar has no dtype of its own to hold the backend to.
    scalar = not isinstance(e, (torch.Tensor, np.ndarray)) or not isinstance(a, (torch.Tensor, np.ndarray, np.generic))
    if te.dtype != ta.dtype and not scalar:
        return Mismatch(Code.DTYPE_MISMATCH, f"{path}: eager gives {describe(te)}, the backend {describe(ta)}")
    if te.shape != ta.shape:
        return Mismatch(Code.SHAPE_MISMATCH, f"{path}: eager gives {describe(te)}, the backend {describe(ta)}")
    if statistical:
        return _compare_statistics(path, te, ta)
    return compare_values(path, te, ta, rtol, atol)


def _compare_statistics(path: str, te: torch.Tensor, ta: torch.Tensor) -> Mismatch | None:
    if not te.dtype.is_floating_point or te.numel() == 0:
        return None
    e, a = te.double(), ta.double()
    scale = max(e.std().item() if e.numel() > 1 else 0.0, 1e-6)
    stats = {
        "mean": (e.mean().item(), a.mean().item(), STATISTIC_TOLERANCE * scale),
        "std": (e.std().item() if e.numel() > 1 else 0.0, a.std().item() if a.numel() > 1 else 0.0, STATISTIC_TOLERANCE * scale),
        "share of zeros": ((e == 0).double().mean().item(), (a == 0).double().mean().item(), STATISTIC_TOLERANCE / 2),
    }
    for name, (ve, va, tol) in stats.items():
        if abs(ve - va) > tol:
            return Mismatch(
                Code.NUMERIC_MISMATCH,
                f"{path}: statistics differ (nondeterministic case): {name} is {va:.4g}, eager {ve:.4g}, "
                f"allowed difference {tol:.3g}",
            )
    return None
