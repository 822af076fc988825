"""Local error against propagated error: one op, eager's exact inputs, an fp64 oracle.

At the first cut that fails, the error there may have been made by that op
or carried in from earlier ops, each a little off. So each suspect op is run
alone on eager's own activations (its inputs carry no error), and its
backend output is compared with the op computed in float64 from the same
inputs. An op's error is measured in units of its dtype's tolerance
(torch.testing's defaults: |x - oracle| / (atol + rtol * |oracle|), the
largest over the elements): above 1, the op is off by more than its dtype
allows. Eager float32 is off too (summation order, rounding): that is the
noise floor, and an op is blamed only beyond both its tolerance and twice
the floor, so a backend that merely sums in another order is not.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Callable

import torch
from torch.testing._comparison import default_tolerances  # torch is pinned; assert_close's own table
from torch.utils._pytree import tree_leaves, tree_map

NOISE_MARGIN = 2.0  # an op is blamed beyond this many times eager's own error (and beyond its tolerance)


@dataclass
class OpError:
    """How far one op's outputs are from the fp64 oracle, the backend's and eager's."""

    own_abs: float  # the backend's largest absolute error
    own_ratio: float  # ... in units of the dtype's tolerance
    noise_abs: float  # eager's (the noise floor)
    noise_ratio: float
    dtype: str

    @property
    def allowed_ratio(self) -> float:
        return max(1.0, NOISE_MARGIN * self.noise_ratio)

    @property
    def exceeds(self) -> bool:
        return self.own_ratio > self.allowed_ratio

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "allowed_ratio": self.allowed_ratio, "exceeds": self.exceeds}


def _upcast(value: Any) -> Any:
    return tree_map(lambda t: t.double() if isinstance(t, torch.Tensor) and t.is_floating_point() else t, value)


def _clone(value: Any) -> Any:
    return tree_map(lambda t: t.clone() if isinstance(t, torch.Tensor) else t, value)


def error(actual: Any, oracle: Any, rtol: float | None = None, atol: float | None = None) -> tuple[float, float, str]:
    """(largest absolute error, largest error in tolerance units, dtype) over the outputs' tensors.

    Tolerances default to the dtype's; a tensor that is not floating point
    must be equal (any difference is infinitely many units).
    """
    worst_abs, worst_ratio, dtype = 0.0, 0.0, ""
    for a, o in zip(tree_leaves(actual), tree_leaves(oracle)):
        if not isinstance(a, torch.Tensor) or not isinstance(o, torch.Tensor):
            continue
        a = torch.as_tensor(a)
        dtype = dtype or str(a.dtype).removeprefix("torch.")
        if a.shape != o.shape:
            return float("inf"), float("inf"), dtype
        if not a.is_floating_point():
            differs = bool((a != o).any())
            worst_ratio = float("inf") if differs else worst_ratio
            continue
        r, t = (rtol, atol) if rtol is not None else default_tolerances(a)
        diff = (a.double() - o.double()).abs()
        both_nan = a.isnan() & o.double().isnan()
        diff = torch.where(both_nan, torch.zeros_like(diff), diff.nan_to_num(float("inf")))
        if diff.numel():
            worst_abs = max(worst_abs, float(diff.max()))
            worst_ratio = max(worst_ratio, float((diff / (t + r * o.double().abs())).max()))
    return worst_abs, worst_ratio, dtype


def op_error(fn: Callable[..., Any], inputs: list[Any], backend_outputs: Any) -> OpError:
    """The backend's error and eager's on `fn(*inputs)`, both against `fn` in float64."""
    with torch.no_grad():
        oracle = fn(*_upcast(_clone(inputs)))
        eager = fn(*_clone(inputs))
    own_abs, own_ratio, dtype = error(backend_outputs, oracle)
    noise_abs, noise_ratio, _ = error(eager, oracle)
    return OpError(own_abs, own_ratio, noise_abs, noise_ratio, dtype)


def blame(errors: dict[str, OpError]) -> str | None:
    """The suspect whose own error exceeds what it is allowed by the largest factor, or None."""
    over = {name: e.own_ratio / e.allowed_ratio for name, e in errors.items() if e.exceeds}
    return max(over, key=over.get) if over else None
