"""Elementwise binary arithmetic: broadcasting, scalar operands, type promotion.

Type promotion follows torch's rules, which backends get wrong in quiet ways:
int + float tensor -> float; int32 + int64 -> int64; a 0-d tensor or Python
scalar only promotes across categories (f16 tensor + f32 0-d tensor stays
f16, int32 tensor + 0-d float64 tensor becomes the default float32).
Divisors are drawn away from zero; integer division and remainder use signed
operands so truncation vs flooring is visible.
"""

import torch

from conformance import Dyn, T, op

from ._common import NUMERIC, b8, bf16, dtypes, f16, f32, f64, i8, i16, i32, i64, nonzero, small_ints, u8, with_nans

n = Dyn("n", 3, 6)
m = Dyn("m", 2, 5)
POS = dict(low=0.5, high=4.0)

CASES = [
    # add / sub / mul: same shape, all numeric dtypes
    *dtypes("add", torch.add, T(3, 4), T(3, 4), dtypes=(*NUMERIC, b8, i8, u8)),
    *dtypes("sub", torch.sub, T(3, 4), T(3, 4), dtypes=(*NUMERIC, i16)),
    *dtypes("mul", torch.mul, T(3, 4), T(3, 4), dtypes=(*NUMERIC, b8)),
    op("add.alpha", lambda x, y: torch.add(x, y, alpha=2.5), T(3, 4), T(3, 4)),
    op("add.alpha_int", lambda x, y: torch.add(x, y, alpha=3), T(3, 4, dtype=i32), T(3, 4, dtype=i32)),
    op("sub.alpha", lambda x, y: torch.sub(x, y, alpha=0.5), T(3, 4), T(3, 4)),
    op("rsub", lambda x, y: torch.rsub(x, y), T(3, 4), T(3, 4)),
    op("rsub.scalar", lambda x: 2.0 - x, T(3, 4)),
    # broadcasting
    op("add.broadcast_outer", torch.add, T(4, 1), T(1, 5)),
    op("add.broadcast_rank", torch.add, T(2, 3, 4), T(3, 1)),
    op("mul.broadcast", torch.mul, T(2, 1, 4), T(3, 1)),
    op("sub.broadcast", torch.sub, T(5), T(3, 1)),
    op("mul.broadcast_4d", torch.mul, T(2, 3, 4, 5), T(3, 1, 1)),
    # scalar operands
    op("add.scalar", lambda x: x + 2.5, T(3, 4)),
    op("add.scalar_int", lambda x: x + 3, T(3, 4, dtype=i32)),
    op("mul.scalar", lambda x: x * 0.5, T(3, 4)),
    op("mul.scalar.f16", lambda x: x * 3.0, T(3, 4, dtype=f16)),
    op("sub.scalar_left", lambda x: 1 - x, T(3, 4, dtype=i64), ops=("aten.rsub",)),
    op("div.scalar", lambda x: x / 4.0, T(3, 4)),
    # type promotion between tensors
    op("add.i32_f32", torch.add, T(3, 4, dtype=i32), T(3, 4)),
    op("add.i32_i64", torch.add, T(3, 4, dtype=i32), T(3, 4, dtype=i64)),
    op("add.f16_f32", torch.add, T(3, 4, dtype=f16), T(3, 4)),
    op("add.bf16_f16", torch.add, T(3, 4, dtype=bf16), T(3, 4, dtype=f16)),
    op("add.bool_i32", torch.add, T(3, 4, dtype=b8), T(3, 4, dtype=i32)),
    op("add.bool_f32", torch.add, T(3, 4, dtype=b8), T(3, 4)),
    op("add.u8_i8", torch.add, T(3, 4, dtype=u8, high=100), T(3, 4, dtype=i8, low=-50, high=50)),
    op("mul.i64_f16", torch.mul, T(3, 4, dtype=i64), T(3, 4, dtype=f16)),
    op("mul.bool_f32", torch.mul, T(3, 4, dtype=b8), T(3, 4)),
    op("sub.f64_f32", torch.sub, T(3, 4, dtype=f64), T(3, 4)),
    # ... and with 0-d tensors and Python scalars (which promote only across categories)
    op("add.f16_0d_f32", torch.add, T(3, 4, dtype=f16), T()),
    op("add.i32_0d_f64", torch.add, T(3, 4, dtype=i32), T(dtype=f64)),
    op("add.i32_0d_i64", torch.add, T(3, 4, dtype=i32), T(dtype=i64)),
    op("mul.i32_scalar_float", lambda x: x * 1.5, T(3, 4, dtype=i32)),
    op("add.bool_scalar_int", lambda x: x + 1, T(3, 4, dtype=b8)),
    op("mul.u8_scalar_int", lambda x: x * 2, T(3, 4, dtype=u8, high=100)),
    # division
    *dtypes("div", torch.div, T(3, 4), T(3, 4, gen=nonzero()), dtypes=(f32, f16, bf16)),
    op("div.i32", torch.div, T(3, 4, dtype=i32), T(3, 4, dtype=i32, gen=nonzero(1, 5))),
    op("div.trunc", lambda x, y: torch.div(x, y, rounding_mode="trunc"), T(3, 4), T(3, 4, gen=nonzero())),
    op("div.floor", lambda x, y: torch.div(x, y, rounding_mode="floor"), T(3, 4), T(3, 4, gen=nonzero())),
    op("div.trunc.i32", lambda x, y: torch.div(x, y, rounding_mode="trunc"), T(3, 4, dtype=i32), T(3, 4, dtype=i32, gen=nonzero(1, 5)), ops=("aten.div",)),
    op("div.floor.i64", lambda x, y: torch.div(x, y, rounding_mode="floor"), T(3, 4, dtype=i64), T(3, 4, dtype=i64, gen=nonzero(1, 5)), ops=("aten.div",)),
    op("div.broadcast", torch.div, T(3, 4), T(4, gen=nonzero())),
    *dtypes("floor_divide", torch.floor_divide, T(3, 4), T(3, 4, gen=nonzero(1, 5)), dtypes=(f32, i32, i64)),
    *dtypes("remainder", torch.remainder, T(3, 4), T(3, 4, gen=nonzero(1, 5)), dtypes=(f32, i32, i64)),
    op("remainder.scalar", lambda x: torch.remainder(x, 3), T(3, 4, dtype=i32)),
    *dtypes("fmod", torch.fmod, T(3, 4), T(3, 4, gen=nonzero(1, 5)), dtypes=(f32, i32)),
    op("fmod.scalar", lambda x: torch.fmod(x, 2.5), T(3, 4)),
    # powers
    op("pow", torch.pow, T(3, 4, **POS), T(3, 4, low=-2.0, high=2.0)),
    op("pow.f16", torch.pow, T(3, 4, dtype=f16, **POS), T(3, 4, dtype=f16, low=-2.0, high=2.0)),
    op("pow.scalar_exp", lambda x: x**2, T(3, 4)),
    op("pow.scalar_exp_cube", lambda x: x**3, T(3, 4, low=-3.0, high=3.0)),
    op("pow.scalar_exp_half", lambda x: x**0.5, T(3, 4, low=0.0, high=9.0)),
    op("pow.scalar_exp_neg", lambda x: x**-1.5, T(3, 4, **POS)),
    op("pow.scalar_base", lambda x: 2.0**x, T(3, 4, low=-4.0, high=4.0)),
    op("pow.i32", torch.pow, T(3, 4, dtype=i32, low=-4, high=5), T(3, 4, dtype=i32, low=0, high=5)),
    op("pow.i64_scalar", lambda x: x**3, T(3, 4, dtype=i64)),
    op("pow.broadcast", torch.pow, T(3, 4, **POS), T(4, low=-2.0, high=2.0)),
    op("float_power", torch.float_power, T(3, 4, **POS), T(3, 4, low=-2.0, high=2.0)),
    # min / max
    *dtypes("maximum", torch.maximum, T(3, 4), T(3, 4), dtypes=(f32, f16, bf16, i32, i64)),
    *dtypes("minimum", torch.minimum, T(3, 4), T(3, 4), dtypes=(f32, f16, i32)),
    op("maximum.broadcast", torch.maximum, T(3, 4), T(4)),
    op("maximum.nan", torch.maximum, T(4, 8, gen=with_nans()), T(4, 8, gen=with_nans())),
    op("minimum.nan", torch.minimum, T(4, 8, gen=with_nans()), T(4, 8, gen=with_nans())),
    op("fmax", torch.fmax, T(4, 8, gen=with_nans()), T(4, 8, gen=with_nans())),
    op("fmin", torch.fmin, T(4, 8, gen=with_nans()), T(4, 8, gen=with_nans())),
    op("maximum.i32_f32", torch.maximum, T(3, 4, dtype=i32), T(3, 4)),
    # two-argument math
    op("atan2", torch.atan2, T(3, 4), T(3, 4)),
    op("atan2.f16", torch.atan2, T(3, 4, dtype=f16), T(3, 4, dtype=f16)),
    op("hypot", torch.hypot, T(3, 4), T(3, 4)),
    op("copysign", torch.copysign, T(3, 4), T(3, 4, gen=nonzero())),
    op("logaddexp", torch.logaddexp, T(3, 4), T(3, 4)),
    op("logaddexp.large", torch.logaddexp, T(3, 4, low=80.0, high=100.0), T(3, 4, low=80.0, high=100.0)),
    op("logaddexp2", torch.logaddexp2, T(3, 4), T(3, 4)),
    op("xlogy", torch.xlogy, T(3, 4, gen=small_ints(0, 3)), T(3, 4, low=0.1, high=5.0)),
    op("heaviside", torch.heaviside, T(3, 4, gen=small_ints(-2, 3)), T(3, 4)),
    op("lerp.scalar", lambda x, y: torch.lerp(x, y, 0.3), T(3, 4), T(3, 4), ops=("aten.lerp",)),
    op("lerp.tensor", torch.lerp, T(3, 4), T(3, 4), T(3, 4, low=0.0, high=1.0), ops=("aten.lerp",)),
    op("addcmul", lambda x, a, b: torch.addcmul(x, a, b, value=0.5), T(3, 4), T(3, 4), T(3, 4)),
    op("addcdiv", lambda x, a, b: torch.addcdiv(x, a, b, value=2.0), T(3, 4), T(3, 4), T(3, 4, gen=nonzero())),
    op("addcmul.broadcast", torch.addcmul, T(3, 4), T(4), T(3, 1)),
    # integer and bitwise
    *dtypes("bitwise_and", torch.bitwise_and, T(3, 4), T(3, 4), dtypes=(i32, i64, b8)),
    *dtypes("bitwise_or", torch.bitwise_or, T(3, 4), T(3, 4), dtypes=(i32, b8)),
    *dtypes("bitwise_xor", torch.bitwise_xor, T(3, 4), T(3, 4), dtypes=(i64, b8)),
    op("bitwise_and.u8", torch.bitwise_and, T(3, 4, dtype=u8), T(3, 4, dtype=u8)),
    op("bitwise_left_shift.i32", torch.bitwise_left_shift, T(3, 4, dtype=i32, low=-100, high=100), T(3, 4, dtype=i32, low=0, high=8)),
    op("bitwise_right_shift.i64", torch.bitwise_right_shift, T(3, 4, dtype=i64, low=-1000, high=1000), T(3, 4, dtype=i64, low=0, high=8)),
    op("gcd.i32", torch.gcd, T(3, 4, dtype=i32, low=-30, high=30), T(3, 4, dtype=i32, low=-30, high=30)),
    # dynamic shapes
    op("add.dynamic", torch.add, T(n, 4), T(n, 4)),
    op("add.dyn_broadcast", torch.add, T(n, 4), T(4)),
    op("add.dyn_2d", torch.add, T(n, m), T(n, m)),
    op("add.dyn_outer", torch.add, T(n, 1), T(1, m)),
    op("mul.dynamic", torch.mul, T(2, n), T(2, n)),
    op("mul.dyn_scalar", lambda x: x * 3.0, T(n, n)),
    op("sub.dynamic", torch.sub, T(n, 3), T(1, 3)),
    op("div.dynamic", torch.div, T(n, 4), T(n, 4, gen=nonzero())),
    op("pow.dynamic", torch.pow, T(n, 4, **POS), T(4, low=-2.0, high=2.0)),
    op("maximum.dynamic", torch.maximum, T(n, 4), T(n, 4)),
    # Found by `conformance fuzz --backend tosa --seed 1`: int64 against int32 with a dynamic dim. IREE's
    # runtime fails it on the task executor (local-task), not on local-sync.
    op("maximum.dynamic_i64_i32_twice", lambda x, y: torch.maximum(torch.maximum(x, y), y),
       T(6, n, 4, dtype=i64, low=-4, high=5), T(6, n, 4, dtype=i32, low=-4, high=5)),
    op("remainder.dynamic", torch.remainder, T(n, 4, dtype=i32), T(n, 4, dtype=i32, gen=nonzero(1, 5))),
    op("atan2.dynamic", torch.atan2, T(m, n), T(m, n)),
    op("add.dyn_i32_f32", torch.add, T(n, 4, dtype=i32), T(n, 4)),
    op("add.dynamic.f16", torch.add, T(n, 4, dtype=f16), T(n, 4, dtype=f16)),
    op("add.dyn_alpha", lambda x, y: torch.add(x, y, alpha=2.5), T(n, 4), T(n, 4)),
    op("mul.dynamic.i64", torch.mul, T(n, 4, dtype=i64), T(4, dtype=i64)),
    op("div.dyn_floor", lambda x, y: torch.div(x, y, rounding_mode="floor"), T(n, 4), T(n, 4, gen=nonzero())),
    op("floor_divide.dynamic", torch.floor_divide, T(n, 4, dtype=i64), T(n, 4, dtype=i64, gen=nonzero(1, 5))),
    op("fmod.dynamic", torch.fmod, T(n, 4), T(n, 4, gen=nonzero(1, 5))),
    op("minimum.dynamic", torch.minimum, T(n, m), T(m)),
    op("hypot.dynamic", torch.hypot, T(n, 4), T(n, 4)),
    op("logaddexp.dynamic", torch.logaddexp, T(n, 4), T(n, 4)),
    op("lerp.dynamic", lambda x, y: torch.lerp(x, y, 0.3), T(n, 4), T(n, 4), ops=("aten.lerp",)),
    op("addcmul.dynamic", torch.addcmul, T(n, 4), T(n, 4), T(4)),
    op("bitwise_and.dynamic", torch.bitwise_and, T(n, 4, dtype=i32), T(n, 4, dtype=i32)),
]
