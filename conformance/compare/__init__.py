"""Comparing a backend's outputs with eager: structure, dtype, shape, NaNs, values.

The first difference found decides the code, in that order, because each
later check is meaningless once an earlier one fails:

    structure.py  how many outputs, and how they are nested
    values.py     deterministic outputs: NaNs in the same places, values within tolerances
                  (default: torch.testing's per-dtype ones)
    samples.py    random outputs, judged as samples of a distribution
    mismatch.py   the Mismatch, and how numbers are spelled in explanations

When a deterministic output differs but matches another of eager's outputs,
the explanation says so: outputs returned in another order look like wrong
numbers otherwise.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from conformance.compare.mismatch import Mismatch, as_tensor, comparing_with, describe, reference
from conformance.compare.samples import compare_samples
from conformance.compare.structure import pair_outputs
from conformance.compare.values import compare_values
from conformance.taxonomy import Code

__all__ = ["Mismatch", "compare", "describe"]


def compare(
    expected: Any,
    actual: Any,
    *,
    rtol: float | None = None,
    atol: float | None = None,
    statistical: bool = False,
    values: bool = True,
    label: str = "output",
    reference: str = "eager",
) -> Mismatch | None:
    """None when `actual` matches `expected`, else the first Mismatch found; `label` names what is compared.

    `statistical`: the outputs are random (a nondeterministic case), judged as samples.
    `values=False` stops after structure, dtype and shape: for a stored random draw.
    `reference`: where `expected` comes from, as explanations name it (a stored
    reference reads "expected (ONNX test data)").
    """
    with comparing_with(reference):
        return _compare(expected, actual, rtol, atol, statistical, values, label)


def _compare(expected, actual, rtol, atol, statistical, values, label) -> Mismatch | None:
    pairs, mismatch = pair_outputs(expected, actual, label)
    if mismatch:
        return mismatch
    for i, (path, e, a) in enumerate(pairs):
        mismatch = _compare_leaf(path, e, a, rtol, atol, statistical, values)
        if mismatch:
            mismatch.leaf, mismatch.expected, mismatch.actual = i, e, a
            return mismatch if statistical or not values else _reordered(pairs, i, mismatch, rtol, atol)
    return None


def _compare_leaf(path, e, a, rtol, atol, statistical, values) -> Mismatch | None:
    if e is None or a is None:
        if e is None and a is None:
            return None
        return Mismatch(Code.STRUCTURE_MISMATCH, f"{path}: {reference()} gives {describe(e)}, the backend {describe(a)}")
    te, ta = as_tensor(e), as_tensor(a)
    if te is None or ta is None:
        if e == a:
            return None
        return Mismatch(Code.STRUCTURE_MISMATCH, f"{path}: {reference()} gives {e!r}, the backend {a!r}")
    # A Python scalar has no dtype of its own to hold the backend to.
    scalar = not isinstance(e, (torch.Tensor, np.ndarray)) or not isinstance(a, (torch.Tensor, np.ndarray, np.generic))
    if statistical and values:
        return compare_samples(path, te, ta, same_dtype_required=not scalar, rtol=rtol, atol=atol)
    if te.dtype != ta.dtype and not scalar:
        return Mismatch(Code.DTYPE_MISMATCH, f"{path}: {reference()} gives {describe(te)}, the backend {describe(ta)}")
    if te.shape != ta.shape:
        return Mismatch(Code.SHAPE_MISMATCH, f"{path}: {reference()} gives {describe(te)}, the backend {describe(ta)}")
    if not values:
        return None
    return compare_values(path, te, ta, rtol, atol)


def _reordered(pairs: list, i: int, mismatch: Mismatch, rtol, atol) -> Mismatch:
    """`mismatch` of output i, or better: the outputs' order, when output i matches another of eager's.

    When every output that differs matches another one of eager's, one for
    one, the backend returned eager's outputs in another order: a
    STRUCTURE_MISMATCH. When only output i does, its own mismatch stands,
    with the match named as a hint.
    """
    elsewhere = _match_elsewhere(pairs, i, rtol, atol)
    if elsewhere is None:
        return mismatch
    order = {i: elsewhere}  # backend output -> the eager output it matches; outputs before i matched in place
    for j in range(i + 1, len(pairs)):
        _, e, a = pairs[j]
        if not _matches(e, a, rtol, atol):
            order[j] = _match_elsewhere(pairs, j, rtol, atol)
    path = pairs[i][0]
    if None not in order.values() and sorted(order) == sorted(order.values()):
        told = ", ".join(f"{pairs[j][0]} matches {reference()}'s {pairs[k][0]}" for j, k in order.items())
        return Mismatch(Code.STRUCTURE_MISMATCH, f"the outputs come in another order: {told} (outputs swapped?)")
    return Mismatch(mismatch.code, f"{mismatch.explanation}; but {path} matches {reference()}'s {pairs[elsewhere][0]} (outputs swapped?)",
                    mismatch.leaf, mismatch.expected, mismatch.actual)


def _match_elsewhere(pairs: list, j: int, rtol, atol) -> int | None:
    """The index of another of eager's outputs that the backend's output j matches, if any."""
    actual = pairs[j][2]
    return next((k for k, (_, e, _) in enumerate(pairs) if k != j and _matches(e, actual, rtol, atol)), None)


def _matches(expected: Any, actual: Any, rtol, atol) -> bool:
    te, ta = as_tensor(expected), as_tensor(actual)
    if te is None or ta is None or te.dtype != ta.dtype or te.shape != ta.shape or te.numel() == 0:
        return False
    return compare_values("", te, ta, rtol, atol) is None
