"""dtype conversions: `.to` between float widths, float<->int (truncation
toward zero, negative values), to/from bool (non-zero is True), and the
shorthand methods. Ids read `to.<from>_to_<to>`; inputs stay inside the
target's range except in `to.f32_to_f16_overflow` (inf is the defined result).
"""

import torch

from conformance import Dyn, T, op
from conformance.dtypes import short_name

from ._common import b8, bf16, f16, f32, f64, i8, i16, i32, i64, small_ints, specials, u8

n = Dyn("n", 3, 6)

# (source spec, target): the source's values are representable in the target
PAIRS = [
    (T(4, 8), f16),
    (T(4, 8), bf16),
    (T(4, 8), f64),
    (T(4, 8, dtype=f64), f32),
    (T(4, 8, dtype=f16), f32),
    (T(4, 8, dtype=bf16), f32),
    (T(4, 8, dtype=f16), bf16),
    (T(4, 8, dtype=bf16), f16),
    (T(4, 8), i32),  # truncation toward zero, on negatives too
    (T(4, 8), i64),
    (T(4, 8, low=-100.0, high=100.0), i8),
    (T(4, 8, low=0.0, high=255.0), u8),
    (T(4, 8, low=-1000.0, high=1000.0), i16),
    (T(4, 8, gen=small_ints(-2, 3)), b8),  # exact zeros become False
    (T(4, 8, dtype=f16), i32),
    (T(4, 8, dtype=i32), f32),
    (T(4, 8, dtype=i64), f32),
    (T(4, 8, dtype=i64), f16),
    (T(4, 8, dtype=i32), i64),
    (T(4, 8, dtype=i64), i32),
    (T(4, 8, dtype=i32), i8),
    (T(4, 8, dtype=i8), i32),
    (T(4, 8, dtype=u8), i32),
    (T(4, 8, dtype=u8), f32),
    (T(4, 8, dtype=i32, gen=small_ints(-2, 3)), b8),
    (T(4, 8, dtype=b8), f32),
    (T(4, 8, dtype=b8), i64),
    (T(4, 8, dtype=b8), f16),
]


def to(dtype):
    return lambda x: x.to(dtype)


CASES = [
    *[op(f"to.{short_name(src.dtype)}_to_{short_name(dst)}", to(dst), src) for src, dst in PAIRS],
    # edge values
    op("to.f32_to_f16_overflow", to(f16), T(4, 8, low=6.6e4, high=1e5)),
    op("to.f32_to_f16_rounding", to(f16), T(4, 8, low=1000.0, high=1001.0)),
    op("to.f32_to_bf16_specials", to(bf16), T(4, 8, gen=specials())),
    op("to.f32_to_bool_specials", to(b8), T(4, 8, gen=specials())),
    op("to.f32_to_i32_halves", to(i32), T(4, 8, gen=lambda s, d, g: (torch.randint(-20, 20, s, generator=g) + 0.5).to(d))),
    op("to.f64_to_f32_precision", to(f32), T(4, 8, dtype=f64, gen=lambda s, d, g: torch.rand(s, generator=g, dtype=d) + 1e8)),
    # the shorthand methods and type_as
    op("to.float_method", lambda x: x.float(), T(4, 8, dtype=i32)),
    op("to.half_method", lambda x: x.half(), T(4, 8)),
    op("to.bfloat16_method", lambda x: x.bfloat16(), T(4, 8)),
    op("to.double_method", lambda x: x.double(), T(4, 8, dtype=f16)),
    op("to.int_method", lambda x: x.int(), T(4, 8)),
    op("to.long_method", lambda x: x.long(), T(4, 8, dtype=b8)),
    op("to.bool_method", lambda x: x.bool(), T(4, 8, dtype=i64, gen=small_ints(-1, 2))),
    op("to.type_as", lambda x, y: x.type_as(y), T(4, 8, dtype=i32), T(2, dtype=f16), ops=("aten.type_as",)),
    op("to.same_dtype", to(f32), T(4, 8)),
    op("to.round_trip", lambda x: x.to(f16).to(f32), T(4, 8)),
    op("to.in_arithmetic", lambda x, y: x.to(f32) * y + x.to(f32), T(4, 8, dtype=i32), T(4, 8)),
    # dynamic
    op("to.dyn_f32_to_f16", to(f16), T(n, 8)),
    op("to.dyn_f32_to_i32", to(i32), T(n, 8)),
    op("to.dyn_i64_to_f32", to(f32), T(n, n, dtype=i64)),
    op("to.dyn_bool_to_f32", to(f32), T(n, 4, dtype=b8)),
    op("to.dyn_bf16_to_f32", to(f32), T(2, n, dtype=bf16)),
    op("to.dyn_f32_to_bf16", to(bf16), T(n, 8)),
    op("to.dyn_f16_to_f32", to(f32), T(n, 8, dtype=f16)),
    op("to.dyn_f32_to_bool", to(b8), T(n, 8, gen=small_ints(-2, 3))),
    op("to.dyn_i32_to_i64", to(i64), T(n, 8, dtype=i32)),
    op("to.dyn_f32_to_u8", to(u8), T(n, 8, low=0.0, high=255.0)),
]
