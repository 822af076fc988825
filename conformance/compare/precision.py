"""Precision or a wrong answer: a numeric mismatch measured against float64.

Eager is not exact either: float32 and float16 round, and a backend may sum
in another order. So both eager's and the backend's outputs are measured
against the same program run in float64 on the same inputs (the oracle).
The backend's largest error, divided by eager's own (never taken below one
unit in the last place at the output's largest magnitude, so an exact eager
does not make every rounding a wrong answer), says which it is: up to
PRECISION_FACTOR times eager's rounding is precision (accumulation order,
narrower intermediates), beyond it a wrong answer (a sign, an index, a
formula). Integer and bool outputs have no rounding of their own: an element
the backend gets wrong is precision only where eager too differs from the
float64 program (a tie broken by rounding, a cast at a boundary).

Beside the verdict, as ExecuTorch's backend tests report them: the share of
elements outside tolerance and the SQNR of the backend's output against
eager's (signal power over error power, in dB).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
from torch.testing._comparison import default_tolerances  # torch is pinned; assert_close's own table

PRECISION_FACTOR = 100.0  # backend error up to this many times eager's own: precision; beyond: a wrong answer
PRECISION, WRONG = "precision", "wrong answer"


@dataclass
class Precision:
    kind: str  # PRECISION or WRONG
    factor: float | None  # the backend's error / eager's, both against float64 (None for integers)
    mismatch_fraction: float  # elements outside tolerance
    sqnr_db: float | None  # the backend's output against eager's (None for integers, inf when equal)

    def sentence(self) -> str:
        """What an explanation appends: how far, against what, and so which."""
        share = f"{100 * self.mismatch_fraction:.3g}% of elements outside tolerance"
        sqnr = f", SQNR {self.sqnr_db:.1f} dB" if self.sqnr_db is not None and math.isfinite(self.sqnr_db) else ""
        if self.factor is None:
            how = ("only where eager too differs from float64" if self.kind == PRECISION
                   else "where eager agrees with float64")
            return f"{share}{sqnr}; integer results differ {how}: {self.kind}"
        closer = " (closer to float64 than eager)" if self.factor < 1 else ""
        return f"{share}{sqnr}; error {self.factor:.3g}x eager's own rounding against float64: {self.kind}{closer}"

    def to_dict(self) -> dict:
        data = asdict(self)
        if self.sqnr_db is not None and not math.isfinite(self.sqnr_db):
            data["sqnr_db"] = None  # JSON has no infinity
        return data


def judge(expected, actual, oracle, rtol: float | None = None, atol: float | None = None) -> Precision | None:
    """Precision or a wrong answer for one output; None when the three cannot be compared (shapes, complex)."""
    e, a, o = (torch.as_tensor(v).detach() for v in (expected, actual, oracle))
    if not (e.shape == a.shape == o.shape) or e.numel() == 0 or e.is_complex() or a.is_complex():
        return None
    a = a.to(e.dtype) if a.dtype != e.dtype and not e.is_floating_point() else a
    if not e.is_floating_point():
        return _judge_exact(e, a, o)
    if rtol is None or atol is None:
        rtol, atol = default_tolerances(e)
    e64, a64, o64 = e.double(), a.double(), o.double()
    finite = torch.isfinite(o64) & torch.isfinite(e64) & torch.isfinite(a64)
    if not bool(finite.any()):
        return None
    ours = float((a64 - o64).abs()[finite].max())
    eager = float((e64 - o64).abs()[finite].max())
    ulp = torch.finfo(e.dtype).eps * float(o64.abs()[finite].max())
    floor = max(eager, ulp, torch.finfo(e.dtype).tiny)
    factor = ours / floor
    outside = ~torch.isclose(a64, e64, rtol=rtol, atol=atol, equal_nan=True)
    return Precision(PRECISION if factor <= PRECISION_FACTOR else WRONG, factor, _share(outside), _sqnr(e64[finite], a64[finite]))


def _judge_exact(e: torch.Tensor, a: torch.Tensor, o: torch.Tensor) -> Precision:
    differ = a != e
    eager_off = e != o.to(e.dtype) if o.is_floating_point() or o.dtype != e.dtype else e != o
    kind = PRECISION if bool(differ.any()) and bool((differ <= eager_off).all()) else WRONG
    return Precision(kind, None, _share(differ), None)


def _share(mask: torch.Tensor) -> float:
    return float(mask.sum()) / mask.numel()


def _sqnr(signal: torch.Tensor, got: torch.Tensor) -> float:
    noise = float(((got - signal) ** 2).sum())
    power = float((signal**2).sum())
    if noise == 0:
        return math.inf
    if power == 0:
        return -math.inf
    return 10 * math.log10(power / noise)
