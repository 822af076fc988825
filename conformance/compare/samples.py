"""Random outputs (dropout, rand, bernoulli, randint): judged as samples, since values cannot match.

The checks, in order; each later one means something only once the earlier pass:

1. NaN and Inf: present on one side and not on the other.
2. dtype, then shape.
3. range: how many of the backend's values lie beyond eager's smallest or
   largest, by more than the case's tolerance (a bernoulli's 1 + 1e-7 is a 1). Whatever the distribution, when two samples come from the same
   one, the chance that k of m values exceed the largest of n others is
   m(m-1)...(m-k+1) / ((n+m)(n+m-1)...(n+m-k+1)), so a handful do and
   hundreds do not; a bound on a count, not on a value, because eager's
   extremes say little about a heavy tail.
4. support: values eager never gives, when eager's sample shows a small set
   (bernoulli's 0 and 1, a dropout mask). How much of the distribution eager
   has not seen is estimated from the values it saw only once (Good-Turing),
   generously, so a randint over a wide range (all values seen once) is
   never held to eager's few. A value within the case's tolerance of one
   eager gives is one eager gives.
5. statistics, only from MIN_STATISTICS_ELEMENTS on: mean, standard
   deviation and share of zeros, each within Z standard errors of the
   difference at the two samples' sizes; then the distribution itself: the
   largest gap between the two samples' distribution functions (the
   two-sample Kolmogorov-Smirnov distance, whose bound holds whatever the
   distribution, and conservatively for discrete ones). It catches what
   moments miss, e.g. a normal made by Box-Muller from two identical
   uniforms: mean and deviation nearly right, skewed by 1.

Each check fails only on evidence that two samples of one distribution
would give less often than once in 1/ALPHA comparisons.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from torch.testing._comparison import default_tolerances  # torch is pinned; this is assert_close's own table

from conformance.compare.mismatch import Mismatch, describe, reference, value
from conformance.taxonomy import Code

ALPHA = 1e-6  # the chance of failing a correct backend, per check
Z = 5.0  # standard errors allowed to a statistic (a two-sided chance of 6e-7 under the normal approximation)
MIN_STATISTICS_ELEMENTS = 1024  # below this the normal approximation of a 5-standard-error tail cannot be trusted
SUPPORT_SLACK = 3.0  # times the Good-Turing estimate of the share of values eager has not seen
SHOWN_VALUES = 5  # distinct values of eager's named in an explanation


def compare_samples(
    path: str, te: torch.Tensor, ta: torch.Tensor, same_dtype_required: bool, rtol: float | None = None, atol: float | None = None
) -> Mismatch | None:
    """The first check a random output fails, or None. `same_dtype_required`: False for Python scalars;
    `rtol`/`atol`: how far a value may be from one eager gives and still count as it (default: torch.testing's)."""
    checks = _checks(te.numel())
    found = _nonfinite(path, te, ta)
    if found:
        return _judged(found, checks)
    if same_dtype_required and te.dtype != ta.dtype:
        return _judged(Mismatch(Code.DTYPE_MISMATCH, f"{path}: {reference()} gives {describe(te)}, the backend {describe(ta)}"), checks)
    if te.shape != ta.shape:
        return _judged(Mismatch(Code.SHAPE_MISMATCH, f"{path}: {reference()} gives {describe(te)}, the backend {describe(ta)}"), checks)
    if te.dtype.is_complex:  # two samples in one: the real parts, and the imaginary ones
        return compare_samples(f"{path} (real part)", te.real, ta.real, same_dtype_required, rtol, atol) or compare_samples(
            f"{path} (imaginary part)", te.imag, ta.imag, same_dtype_required, rtol, atol
        )
    e, a = _finite(te), _finite(ta.to(te.dtype))
    if e.numel() == 0 or a.numel() == 0:
        return None
    spell = (lambda number: value(bool(number))) if te.dtype == torch.bool else value
    if rtol is None or atol is None:
        rtol, atol = default_tolerances(te) if te.dtype.is_floating_point else (0.0, 0.0)
    # Every check below is blind to the order of values: both samples sorted once, then searched, not sorted again.
    e, a = _ascending(e), _ascending(a)
    a = _snapped(e, a, rtol, atol)
    for check in (_range, _support, _statistics):
        found = check(path, e, a, spell)
        if found:
            return _judged(found, checks)
    return None


def _checks(elements: int) -> str:
    if elements >= MIN_STATISTICS_ELEMENTS:
        return "NaN/Inf, dtype, shape, range, support and statistics"
    return f"NaN/Inf, dtype, shape, range and support; {elements} elements are too few for statistics"


def _judged(mismatch: Mismatch, checks: str) -> Mismatch:
    return Mismatch(mismatch.code, f"{mismatch.explanation} (a random output, judged on {checks})")


def _nonfinite(path: str, te: torch.Tensor, ta: torch.Tensor) -> Mismatch | None:
    """NaN, inf or -inf on one side only (counts differ between samples; presence must not)."""
    for name, code, test in (
        ("NaN", Code.NAN_MISMATCH, torch.isnan),
        ("inf", Code.NUMERIC_MISMATCH, torch.isposinf),
        ("-inf", Code.NUMERIC_MISMATCH, torch.isneginf),
    ):
        ours, theirs = _count(test, te), _count(test, ta)
        if theirs and not ours:
            return Mismatch(code, f"{path}: the backend gives {name} at {theirs} of {ta.numel()} places, {reference()} at none")
        if ours and not theirs:
            return Mismatch(code, f"{path}: {reference()} gives {name} at {ours} of {te.numel()} places, the backend at none")
    return None


def _count(test, t: torch.Tensor) -> int:
    if t.dtype.is_complex:
        return _count(test, t.real) + _count(test, t.imag)
    return int(test(t).sum()) if t.dtype.is_floating_point else 0


def _finite(t: torch.Tensor) -> torch.Tensor:
    """The finite values, flat; bools as 0 and 1 (so they order and count like numbers)."""
    flat = t.reshape(-1)
    if t.dtype == torch.bool:
        return flat.to(torch.uint8)
    if not t.dtype.is_floating_point:
        return flat
    finite = torch.isfinite(flat)
    return flat if bool(finite.all()) else flat[finite]


def _searchable(t: torch.Tensor) -> np.ndarray:
    """`t` as numpy, whose sort and searchsorted on sorted keys are several times torch's on millions of values;
    a dtype numpy has not (bfloat16, float8) widened to float32, exactly."""
    try:
        return t.numpy(force=True)
    except TypeError:
        return t.float().numpy()


def _ascending(t: torch.Tensor) -> torch.Tensor:
    """`t`'s values in ascending order, in its own dtype."""
    return torch.from_numpy(np.sort(_searchable(t))).to(t.dtype)


def _snapped(e: torch.Tensor, a: torch.Tensor, rtol: float, atol: float) -> torch.Tensor:
    """The backend's values (ascending), each within tolerance of a value eager gives replaced by that value.

    Only the range and support checks care which values occur; a float a
    rounding away from one of eager's (1 + 1e-7 for a bernoulli's 1) is that
    value, as the deterministic comparison would say.
    """
    if not (rtol or atol) or not e.dtype.is_floating_point:
        return a
    seen = torch.unique_consecutive(e)  # e is sorted
    right = torch.from_numpy(np.searchsorted(_searchable(seen), _searchable(a))).clamp(max=seen.numel() - 1)
    left = (right - 1).clamp(min=0)
    snapped = a.clone()
    for side in (left, right):
        near = seen[side]
        close = (a - near).abs() <= atol + rtol * near.abs()
        snapped = torch.where(close, near, snapped)
    return snapped if bool((snapped[1:] >= snapped[:-1]).all()) else _ascending(snapped)


def _range(path: str, e: torch.Tensor, a: torch.Tensor, spell) -> Mismatch | None:
    n, m = e.numel(), a.numel()
    largest, smallest = e.max(), e.min()
    for outside, side, bound in ((a > largest, f"above {reference()}'s largest", largest), (a < smallest, f"below {reference()}'s smallest", smallest)):
        k = int(outside.sum())
        if k and _exceedance_chance(k, n, m) < ALPHA:
            beyond = a[outside]
            extreme = beyond.max() if bound is largest else beyond.min()
            return Mismatch(
                Code.NUMERIC_MISMATCH,
                f"{path}: {k} of {m} values lie {side}, {spell(bound.item())} (the backend's extreme: {spell(extreme.item())}); "
                f"a sample of {reference()}'s distribution puts only a few there",
            )
    return None


def _exceedance_chance(k: int, n: int, m: int) -> float:
    """The chance that k or more of m draws exceed the largest of n draws of the same distribution."""
    if k > m:
        return 0.0
    return math.exp(sum(math.log((m - i) / (n + m - i)) for i in range(k)))


def _support(path: str, e: torch.Tensor, a: torch.Tensor, spell) -> Mismatch | None:
    n, m = e.numel(), a.numel()
    seen, counts = torch.unique_consecutive(e, return_counts=True)  # e is sorted
    once = int((counts == 1).sum())
    expected_unseen = SUPPORT_SLACK * m * (once + 1) / n
    if expected_unseen >= m:
        return None  # eager's sample is spread too thin to say what the backend may not give
    unseen = ~torch.isin(a, seen)
    k = int(unseen.sum())
    # P(Poisson(expected_unseen) >= k) is the regularised lower incomplete gamma function at (k, expected_unseen).
    if k and float(torch.special.gammainc(torch.tensor(float(k)), torch.tensor(expected_unseen))) < ALPHA:
        shown = ", ".join(spell(v) for v in seen[:SHOWN_VALUES].tolist())
        more = ", ..." if seen.numel() > SHOWN_VALUES else ""
        return Mismatch(
            Code.NUMERIC_MISMATCH,
            f"{path}: {k} of {m} values are ones {reference()} never gives (e.g. {spell(a[unseen][0].item())}); "
            f"{reference()}'s {n} values take only {seen.numel()} distinct values ({shown}{more})",
        )
    return None


def _statistics(path: str, e: torch.Tensor, a: torch.Tensor, spell) -> Mismatch | None:
    n, m = e.numel(), a.numel()
    if n < MIN_STATISTICS_ELEMENTS:
        return None
    x, y = e.to(torch.float64), a.to(torch.float64)
    mean_x, mean_y = x.mean().item(), y.mean().item()
    var_x, var_y = x.var().item(), y.var().item()
    std_x, std_y = math.sqrt(var_x), math.sqrt(var_y)
    # A sample variance varies as (fourth central moment - variance squared) / size; never taken below a
    # normal distribution's 2 variance squared, where that first-order formula says ~0 (two equally likely values).
    spread_x = max(((x - mean_x) ** 4).mean().item() - var_x**2, 2 * var_x**2)
    spread_y = max(((y - mean_y) ** 4).mean().item() - var_y**2, 2 * var_y**2)
    zeros_x, zeros_y = int((x == 0).sum()), int((y == 0).sum())
    share = (zeros_x + zeros_y + 1) / (n + m + 2)  # pooled, and never exactly 0 or 1
    stats = {
        "mean": (mean_x, mean_y, Z * math.sqrt(var_x / n + var_y / m)),
        "std": (std_x, std_y, Z * math.sqrt(spread_x / n + spread_y / m) / (std_x + std_y or 1.0)),
        "share of zeros": (zeros_x / n, zeros_y / m, Z * math.sqrt(share * (1 - share) * (1 / n + 1 / m))),
    }
    for name, (ours, theirs, allowed) in stats.items():
        if abs(ours - theirs) > allowed:
            return Mismatch(
                Code.NUMERIC_MISMATCH,
                f"{path}: statistics differ: {name} is {theirs:.4g}, {reference()} {ours:.4g}, allowed difference {allowed:.3g} "
                f"({Z:g} standard errors at {n} and {m} elements)",
            )
    # P(distance >= d) <= 2 exp(-2 d^2 nm / (n + m)) for two samples of one distribution.
    allowed = math.sqrt(math.log(2 / ALPHA) * (n + m) / (2 * n * m))
    distance = _distance(x, y)
    if distance > allowed:
        return Mismatch(
            Code.NUMERIC_MISMATCH,
            f"{path}: statistics differ: the distributions are {distance:.3g} apart (the largest gap between the two samples' "
            f"distribution functions), allowed {allowed:.3g} at {n} and {m} elements",
        )
    return None


def _distance(x: torch.Tensor, y: torch.Tensor) -> float:
    """The two-sample Kolmogorov-Smirnov distance of two ascending samples: max |F_x(v) - F_y(v)| over every
    value v of either sample, F read after all values equal to v. Counted in whole numbers (n m F_x - n m F_y): exact."""
    xs, ys = x.numpy(force=True), y.numpy(force=True)
    n, m = xs.size, ys.size
    largest = 0
    for values in (xs, ys):
        values = values[np.append(values[1:] != values[:-1], True)]  # each distinct value once (a bernoulli's two)
        gaps = np.searchsorted(xs, values, "right") * m - np.searchsorted(ys, values, "right") * n
        largest = max(largest, int(np.abs(gaps).max()))
    return largest / (n * m)
