"""Deterministic outputs: NaNs in the same places, then values within tolerances.

Outputs are compared a piece at a time (PIECE elements), so comparing costs
a few megabytes beyond the two outputs, whatever their size: widening a
whole float16 output to float64 and keeping full-size temporaries took
about 20 times the output's size, and a large output was killed "in stage
compare" at the memory limit, a failure of ours reported as the backend's.
Equal outputs take a fast path that allocates nothing (torch.equal).
Integers and bools are compared exactly in their own dtype (float64 cannot
tell 2**53 from 2**53 + 1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import torch
from torch.testing._comparison import default_tolerances  # torch is pinned; this is assert_close's own table

from conformance.compare.mismatch import Mismatch, amount, element, index, reference, value
from conformance.taxonomy import Code

PIECE = 1 << 20  # elements: float64 temporaries of 8 MB each; smaller pieces cost time in thread-pool start-ups


def pieces(a: torch.Tensor, b: torch.Tensor, offset: int = 0) -> Iterator[tuple[int, torch.Tensor, torch.Tensor]]:
    """(flat offset, piece of `a`, same piece of `b`): 1-D, row-major, about PIECE elements each.

    Pieces are cut by shape alone, so `a` and `b` are cut alike whatever
    their strides; a piece of a non-contiguous tensor is copied, never the
    tensor whole.
    """
    if a.numel() == 0:
        return
    if a.dim() == 0:
        yield offset, a.reshape(1), b.reshape(1)
        return
    row = a[0].numel()
    if row > PIECE:
        for i in range(a.shape[0]):
            yield from pieces(a[i], b[i], offset + i * row)
        return
    rows = max(1, PIECE // row)
    for start in range(0, a.shape[0], rows):
        yield offset + start * row, a[start : start + rows].reshape(-1), b[start : start + rows].reshape(-1)


@dataclass
class _Scan:
    """What a pass over the pieces found: NaN disagreements, differing elements, the worst one."""

    differ: int = 0
    extra_nans: int = 0  # NaN in the backend's output only
    first_extra_nan: int = -1
    missing_nans: int = 0  # NaN in eager's output only
    first_missing_nan: int = -1
    worst: int = -1  # flat index of the largest error among differing elements
    worst_error: float = -1.0
    max_rel: float | None = None  # over differing elements where eager is not 0


def compare_values(path: str, te: torch.Tensor, ta: torch.Tensor, rtol: float | None, atol: float | None) -> Mismatch | None:
    """NAN_MISMATCH or NUMERIC_MISMATCH of two outputs of one shape, or None."""
    if te.dtype == ta.dtype and _equal(te, ta):
        return None  # NaN never equals NaN: outputs with NaNs take the long way
    if rtol is None:
        rtol, atol = default_tolerances(te)
    inexact = te.dtype.is_floating_point or te.dtype.is_complex
    scan = _Scan()
    for offset, e, a in pieces(te, ta):
        if inexact:
            _scan_inexact(scan, offset, e, a, rtol, atol)
        else:
            _scan_exact(scan, offset, e, a)
    if scan.extra_nans:
        return Mismatch(
            Code.NAN_MISMATCH,
            f"{path}: the backend gives NaN at {scan.extra_nans} of {te.numel()} places where {reference()} does not "
            f"(first at {index(scan.first_extra_nan, te.shape)}, {reference()} {value(element(te, scan.first_extra_nan))})",
        )
    if scan.missing_nans:
        return Mismatch(
            Code.NAN_MISMATCH,
            f"{path}: {reference()} gives NaN at {scan.missing_nans} of {te.numel()} places where the backend does not "
            f"(first at {index(scan.first_missing_nan, te.shape)}, backend {value(element(ta, scan.first_missing_nan))})",
        )
    if not scan.differ:
        return None
    tolerances = f"rtol={rtol:g}, atol={atol:g}" if (rtol or atol) else "exact"
    head = f"{path}: {scan.differ} of {te.numel()} elements differ ({tolerances}); "
    expected, got = element(te, scan.worst), element(ta, scan.worst)
    where = f"at {index(scan.worst, te.shape)} (expected {value(expected)}, got {value(got)})"
    if te.dtype == torch.bool:
        return Mismatch(Code.NUMERIC_MISMATCH, f"{head}first {where}")
    error = abs(got - expected) if not inexact else scan.worst_error
    rel = f"{scan.max_rel:.3g}" if scan.max_rel is not None else f"n/a ({reference()} is 0 wherever they differ)"
    return Mismatch(Code.NUMERIC_MISMATCH, f"{head}max abs error {amount(error)} {where}; max rel error {rel}")


def _equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    """torch.equal, also for complex32 (torch.chalf), which torch.equal does not implement on CPU."""
    if a.dtype == torch.complex32:
        a, b = torch.view_as_real(a), torch.view_as_real(b)  # two float16s per element: equal iff both are
    return torch.equal(a, b)


def _scan_inexact(scan: _Scan, offset: int, e: torch.Tensor, a: torch.Tensor, rtol: float, atol: float) -> None:
    wide = torch.complex128 if e.dtype.is_complex else torch.float64
    e, a = e.to(wide), a.to(wide)
    close = torch.isclose(a, e, rtol=rtol, atol=atol, equal_nan=True)
    if bool(close.all()):
        return  # NaNs where both have them, if any
    nan_e, nan_a = torch.isnan(e), torch.isnan(a)
    extra, missing = nan_a & ~nan_e, nan_e & ~nan_a
    if bool(extra.any()):
        if not scan.extra_nans:
            scan.first_extra_nan = offset + int(extra.nonzero()[0])
        scan.extra_nans += int(extra.sum())
    if bool(missing.any()):
        if not scan.missing_nans:
            scan.first_missing_nan = offset + int(missing.nonzero()[0])
        scan.missing_nans += int(missing.sum())
    error = (a - e).abs()
    # Infinities of opposite sign, or inf against a number, make the error infinite: keep the index honest.
    error = torch.where(torch.isnan(error), torch.zeros_like(error), error)
    _record(scan, offset, ~close, error, e.abs())


def _scan_exact(scan: _Scan, offset: int, e: torch.Tensor, a: torch.Tensor) -> None:
    differ = e != a
    if not bool(differ.any()):
        return
    if e.dtype == torch.bool:
        if scan.worst < 0:
            scan.worst = offset + int(differ.nonzero()[0])
        scan.differ += int(differ.sum())
        return
    # float64 only to rank the errors and scale them; the values shown are read from the outputs themselves.
    e64 = e.to(torch.float64)
    _record(scan, offset, differ, (a.to(torch.float64) - e64).abs(), e64.abs())


def _record(scan: _Scan, offset: int, differ: torch.Tensor, error: torch.Tensor, scale: torch.Tensor) -> None:
    """Count a piece's differing elements; keep the first largest error and the largest relative one."""
    scan.differ += int(differ.sum())
    error = torch.where(differ, error, torch.full_like(error, -1.0))
    worst = int(torch.argmax(error))
    if float(error[worst]) > scan.worst_error:
        scan.worst, scan.worst_error = offset + worst, float(error[worst])
    relative = differ & (scale != 0)
    if bool(relative.any()):
        rel = float((error[relative] / scale[relative]).max())
        scan.max_rel = rel if scan.max_rel is None else max(scan.max_rel, rel)
