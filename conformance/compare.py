"""Comparing a backend's outputs with eager: structure, dtype, shape, NaNs, values.

The first difference found decides the code, in that order, because each
later check is meaningless once an earlier one fails. Tolerances default to
torch.testing's per-dtype ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch.testing._comparison import default_tolerances  # torch is pinned; this is assert_close's own table
from torch.utils._pytree import keystr, tree_flatten_with_path

from conformance import dtypes
from conformance.taxonomy import Code

# Nondeterministic cases (dropout, rand) are judged on statistics: each of
# mean, standard deviation and share of zeros may move by this fraction of
# eager's standard deviation (zeros: absolute share).
STATISTIC_TOLERANCE = 0.1


@dataclass
class Mismatch:
    code: str
    explanation: str


def _leaves(value: Any, label: str = "output") -> list[tuple[str, Any]]:
    flat, _ = tree_flatten_with_path(value)
    return [(f"{label}{keystr(path)}" if path else label, leaf) for path, leaf in flat]


def _as_tensor(value: Any) -> torch.Tensor | None:
    if isinstance(value, torch.Tensor):
        return value.detach()
    if isinstance(value, np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(value))
    if isinstance(value, np.generic):
        return torch.from_numpy(np.asarray(value))
    if isinstance(value, (bool, int, float)):
        return torch.tensor(value)
    return None


def describe(value: Any) -> str:
    t = _as_tensor(value)
    if t is None:
        return type(value).__name__
    return f"{dtypes.name(t.dtype)}{list(t.shape)}"


def _fmt_index(flat_index: int, shape: torch.Size) -> str:
    if len(shape) == 0:
        return "[]"
    return str([int(i) for i in np.unravel_index(flat_index, tuple(shape))])


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
    """None when `actual` matches `expected`, else the first Mismatch found.

    `label` names what is compared, `reference` where `expected` comes from
    (a stored reference reads "expected (ONNX test data)"). `values=False`
    stops after structure, dtype and shape: for a stored random draw.
    """
    exp, act = _leaves(expected, label), _leaves(actual, label)
    if len(exp) != len(act):
        return Mismatch(
            Code.STRUCTURE_MISMATCH,
            f"{reference} returns {len(exp)} output(s) ({', '.join(describe(v) for _, v in exp)}) "
            f"but the backend returned {len(act)} ({', '.join(describe(v) for _, v in act) or 'nothing'})",
        )
    for (path, e), (_, a) in zip(exp, act):
        mismatch = _compare_leaf(path, e, a, rtol, atol, statistical, values, reference)
        if mismatch:
            return mismatch
    return None


def _compare_leaf(path, e, a, rtol, atol, statistical, values, reference) -> Mismatch | None:
    if e is None or a is None:
        if e is None and a is None:
            return None
        return Mismatch(Code.STRUCTURE_MISMATCH, f"{path}: {reference} gives {describe(e)}, the backend {describe(a)}")
    te, ta = _as_tensor(e), _as_tensor(a)
    if te is None or ta is None:
        if e == a:
            return None
        return Mismatch(Code.STRUCTURE_MISMATCH, f"{path}: {reference} gives {e!r}, the backend {a!r}")
    # A Python scalar has no dtype of its own to hold the backend to.
    scalar = not isinstance(e, (torch.Tensor, np.ndarray)) or not isinstance(a, (torch.Tensor, np.ndarray, np.generic))
    if te.dtype != ta.dtype and not scalar:
        return Mismatch(
            Code.DTYPE_MISMATCH,
            f"{path}: {reference} gives {describe(te)}, the backend {describe(ta)}",
        )
    if te.shape != ta.shape:
        return Mismatch(Code.SHAPE_MISMATCH, f"{path}: {reference} gives {describe(te)}, the backend {describe(ta)}")
    if not values:
        return None
    if statistical:
        return _compare_statistics(path, te, ta, reference)
    if te.dtype.is_floating_point or te.dtype.is_complex:
        nan = _compare_nans(path, te, ta, reference)
        if nan:
            return nan
    return _compare_values(path, te, ta, rtol, atol)


def _compare_nans(path: str, te: torch.Tensor, ta: torch.Tensor, reference: str) -> Mismatch | None:
    ne, na = torch.isnan(te), torch.isnan(ta.to(te.dtype))
    if torch.equal(ne, na):
        return None
    extra = (na & ~ne).flatten()
    missing = (ne & ~na).flatten()
    if extra.any():
        i = int(extra.nonzero()[0])
        return Mismatch(
            Code.NAN_MISMATCH,
            f"{path}: the backend gives NaN at {int(extra.sum())} of {te.numel()} places where {reference} does not "
            f"(first at {_fmt_index(i, te.shape)}, {reference} {te.flatten()[i].item():.6g})",
        )
    i = int(missing.nonzero()[0])
    return Mismatch(
        Code.NAN_MISMATCH,
        f"{path}: {reference} gives NaN at {int(missing.sum())} of {te.numel()} places where the backend does not "
        f"(first at {_fmt_index(i, te.shape)}, backend {ta.flatten()[i].item():.6g})",
    )


def _compare_values(path, te, ta, rtol, atol) -> Mismatch | None:
    if rtol is None:
        rtol, atol = default_tolerances(te)
    if te.dtype.is_floating_point or te.dtype.is_complex:
        e64, a64 = te.to(torch.complex128 if te.dtype.is_complex else torch.float64), ta.to(
            torch.complex128 if te.dtype.is_complex else torch.float64
        )
        close = torch.isclose(a64, e64, rtol=rtol, atol=atol, equal_nan=True)
    else:
        e64, a64 = te.to(torch.float64), ta.to(torch.float64)
        close = a64 == e64
    if bool(close.all()):
        return None
    bad = int((~close).sum())
    diff = (a64 - e64).abs()
    # Infinities of opposite sign or inf vs finite make the error infinite; keep the index honest.
    diff = torch.where(torch.isnan(diff), torch.zeros_like(diff), diff).flatten()
    worst = int(torch.argmax(torch.where(close.flatten(), torch.zeros_like(diff), diff)))
    rel = diff / e64.abs().flatten().clamp_min(torch.finfo(torch.float64).tiny)
    rel = torch.where(close.flatten(), torch.zeros_like(rel), rel)
    tolerances = f"rtol={rtol:g}, atol={atol:g}" if (rtol or atol) else "exact"
    return Mismatch(
        Code.NUMERIC_MISMATCH,
        f"{path}: {bad} of {te.numel()} elements differ ({tolerances}); "
        f"max abs error {diff[worst].item():.3g} at {_fmt_index(worst, te.shape)} "
        f"(expected {e64.flatten()[worst].item():.6g}, got {a64.flatten()[worst].item():.6g}); "
        f"max rel error {rel.max().item():.3g}",
    )


def _compare_statistics(path: str, te: torch.Tensor, ta: torch.Tensor, reference: str) -> Mismatch | None:
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
                f"{path}: statistics differ (nondeterministic case): {name} is {va:.4g}, {reference} {ve:.4g}, "
                f"allowed difference {tol:.3g}",
            )
    return None
