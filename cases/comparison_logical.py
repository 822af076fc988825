"""Comparisons (bool results), logical ops, and tests for special float values.

Float operands of eq/ne/le/ge are small integers stored as floats, so that
equality actually occurs; mixed-dtype comparisons check that the operands
are promoted before comparing (an int32 3 equals a float 3.0).
"""

import torch

from conformance import Dyn, T, op

from ._common import b8, bf16, dtypes, f16, f32, i32, i64, small_ints, specials, u8

n = Dyn("n", 3, 6)
S = small_ints(-3, 3)

CASES = [
    # tensor vs tensor, in several dtypes
    *dtypes("eq", torch.eq, T(4, 5, gen=S), T(4, 5, gen=S), dtypes=(f32, f16, bf16, i32, i64, b8)),
    *dtypes("ne", torch.ne, T(4, 5, gen=S), T(4, 5, gen=S), dtypes=(f32, i64, b8)),
    *dtypes("lt", torch.lt, T(4, 5, gen=S), T(4, 5, gen=S), dtypes=(f32, f16, i32)),
    *dtypes("le", torch.le, T(4, 5, gen=S), T(4, 5, gen=S), dtypes=(f32, bf16, i64)),
    *dtypes("gt", torch.gt, T(4, 5), T(4, 5), dtypes=(f32, f16, bf16, i32, i64)),
    *dtypes("ge", torch.ge, T(4, 5, gen=S), T(4, 5, gen=S), dtypes=(f32, i32, u8)),
    op("gt.bool", torch.gt, T(4, 5, dtype=b8), T(4, 5, dtype=b8)),
    # scalars and broadcasting
    op("eq.scalar", lambda x: x == 1.0, T(4, 5, gen=S)),
    op("ne.scalar_int", lambda x: x != 0, T(4, 5, dtype=i32, gen=S)),
    op("gt.scalar", lambda x: x > 0.5, T(4, 5)),
    op("lt.scalar_float_on_int", lambda x: x < 0.5, T(4, 5, dtype=i32, gen=S), ops=("aten.lt",)),
    op("le.broadcast", torch.le, T(4, 5), T(5)),
    op("ge.broadcast_outer", torch.ge, T(4, 1), T(1, 5)),
    op("eq.0d", torch.eq, T(4, 5, gen=S), T(gen=S)),
    # mixed dtypes are promoted before comparing
    op("eq.i32_f32", torch.eq, T(4, 5, dtype=i32, gen=S), T(4, 5, gen=S)),
    op("lt.f16_f32", torch.lt, T(4, 5, dtype=f16), T(4, 5)),
    op("gt.i64_bool", torch.gt, T(4, 5, dtype=i64, gen=S), T(4, 5, dtype=b8)),
    # comparisons with nan and inf
    op("eq.nan", torch.eq, T(4, 8, gen=specials()), T(4, 8, gen=specials())),
    op("lt.nan", torch.lt, T(4, 8, gen=specials()), T(4, 8, gen=specials())),
    op("ne.nan_self", lambda x: x != x, T(4, 8, gen=specials()), ops=("aten.ne",)),
    # logical ops: bool operands, and truthiness of numbers
    *dtypes("logical_and", torch.logical_and, T(4, 5), T(4, 5), dtypes=(b8,)),
    *dtypes("logical_or", torch.logical_or, T(4, 5), T(4, 5), dtypes=(b8,)),
    *dtypes("logical_xor", torch.logical_xor, T(4, 5), T(4, 5), dtypes=(b8,)),
    *dtypes("logical_not", torch.logical_not, T(4, 5), dtypes=(b8, f32, i32)),
    op("logical_and.f32", torch.logical_and, T(4, 5, gen=S), T(4, 5, gen=S)),
    op("logical_or.i32_f32", torch.logical_or, T(4, 5, dtype=i32, gen=S), T(4, 5, gen=S), ops=("aten.logical_or",)),
    op("logical_xor.broadcast", torch.logical_xor, T(4, 5, dtype=b8), T(5, dtype=b8)),
    op("bitwise_and.bool_masks", lambda x, y: (x > 0) & (y < 0) | ~(x > y), T(4, 5), T(4, 5), ops=("aten.__and__", "aten.__or__", "aten.bitwise_not")),
    # special values
    op("isnan", torch.isnan, T(4, 8, gen=specials())),
    op("isinf", torch.isinf, T(4, 8, gen=specials())),
    op("isfinite", torch.isfinite, T(4, 8, gen=specials())),
    op("isposinf", torch.isposinf, T(4, 8, gen=specials())),
    op("isneginf", torch.isneginf, T(4, 8, gen=specials())),
    op("isnan.f16", torch.isnan, T(4, 8, dtype=f16, gen=specials())),
    op("isinf.bf16", torch.isinf, T(4, 8, dtype=bf16, gen=specials())),
    op("isfinite.i32", torch.isfinite, T(4, 8, dtype=i32)),
    op("isclose", lambda x, y: torch.isclose(x, y, atol=1.5), T(4, 8, gen=S), T(4, 8, gen=S)),
    op("isclose.nan", lambda x, y: torch.isclose(x, y, equal_nan=True), T(4, 8, gen=specials()), T(4, 8, gen=specials())),
    # dynamic
    op("eq.dynamic", torch.eq, T(n, 5, gen=S), T(n, 5, gen=S)),
    op("gt.dynamic", torch.gt, T(n, n), T(n, n)),
    op("lt.dyn_broadcast", torch.lt, T(n, 5), T(5)),
    op("ge.dyn_scalar", lambda x: x >= 0.0, T(2, n)),
    op("logical_and.dynamic", torch.logical_and, T(n, 5, dtype=b8), T(n, 5, dtype=b8)),
    op("logical_not.dynamic", torch.logical_not, T(n, 3, dtype=b8)),
    op("isnan.dynamic", torch.isnan, T(n, 8, gen=specials())),
    op("ne.dynamic", torch.ne, T(n, 5, gen=S), T(n, 5, gen=S)),
    op("le.dynamic.i32", torch.le, T(n, 5, dtype=i32, gen=S), T(n, 5, dtype=i32, gen=S)),
    op("ge.dyn_mixed", torch.ge, T(n, 5, dtype=i64, gen=S), T(5, gen=S)),
    op("logical_or.dynamic", torch.logical_or, T(n, 5, dtype=b8), T(n, 5, dtype=b8)),
    op("logical_xor.dynamic", torch.logical_xor, T(n, 5, dtype=b8), T(5, dtype=b8)),
    op("isinf.dynamic", torch.isinf, T(n, 8, gen=specials())),
]
