"""Choosing between values: clamp, where, masked_fill and friends."""

import torch

from conformance import Dyn, T, op

from ._common import NUMERIC, b8, dtypes, f16, f32, i32, i64, mask, specials

n = Dyn("n", 3, 6)
M = mask(0.5)

CASES = [
    # clamp with scalar bounds
    *dtypes("clamp", lambda x: torch.clamp(x, -2.0, 3.0), T(4, 5), dtypes=(f32, f16, torch.bfloat16)),
    *dtypes("clamp.int_bounds", lambda x: torch.clamp(x, -2, 3), T(4, 5), dtypes=(i32, i64), ops=("aten.clamp",)),
    op("clamp.min_only", lambda x: torch.clamp(x, min=0.5), T(4, 5)),
    op("clamp.max_only", lambda x: torch.clamp(x, max=-0.5), T(4, 5)),
    op("clamp.min_gt_max", lambda x: torch.clamp(x, min=2.0, max=1.0), T(4, 5)),
    op("clamp.nan", lambda x: torch.clamp(x, -1.0, 1.0), T(4, 8, gen=specials())),
    op("clamp.i32_float_bounds", lambda x: torch.clamp(x, -2.5, 3.5), T(4, 5, dtype=i32)),
    # clamp with tensor bounds (broadcast)
    op("clamp.tensor", lambda x, lo, hi: torch.clamp(x, lo, hi), T(4, 5), T(4, 5, low=-5.0, high=0.0), T(4, 5, low=0.0, high=5.0)),
    op("clamp.tensor_broadcast", lambda x, lo, hi: torch.clamp(x, lo, hi), T(4, 5), T(5, low=-5.0, high=0.0), T(4, 1, low=0.0, high=5.0)),
    op("clamp.tensor_min_only", lambda x, lo: torch.clamp(x, min=lo), T(4, 5), T(4, 5)),
    op("clamp_min", lambda x: torch.clamp_min(x, 0.0), T(4, 5)),
    op("clamp_max", lambda x: torch.clamp_max(x, 1.0), T(4, 5)),
    op("clip", lambda x: torch.clip(x, -1.0, 1.0), T(4, 5)),
    op("clamp.dynamic", lambda x: torch.clamp(x, -2.0, 3.0), T(n, 5)),
    op("clamp.dynamic.i32", lambda x: torch.clamp(x, -2, 3), T(n, 5, dtype=i32)),
    op("clamp_min.dynamic", lambda x: torch.clamp_min(x, 0.0), T(n, n)),
    op("clamp.dyn_tensor", lambda x, lo, hi: torch.clamp(x, lo, hi), T(n, 5), T(n, 5, low=-5.0, high=0.0), T(5, low=0.0, high=5.0)),
    # where
    *dtypes("where", torch.where, T(4, 5, dtype=b8, gen=M), T(4, 5), T(4, 5), dtypes=(*NUMERIC, b8)),
    op("where.scalar_other", lambda c, x: torch.where(c, x, 0.0), T(4, 5, dtype=b8, gen=M), T(4, 5)),
    op("where.scalar_both", lambda c: torch.where(c, 1.0, -1.0), T(4, 5, dtype=b8, gen=M)),
    op("where.broadcast", torch.where, T(4, 1, dtype=b8, gen=M), T(5), T(4, 5)),
    op("where.from_compare", lambda x, y: torch.where(x > y, x, y), T(4, 5), T(4, 5)),
    op("where.promote_i32_f32", torch.where, T(4, 5, dtype=b8, gen=M), T(4, 5, dtype=i32), T(4, 5)),
    op("where.promote_f16_f32", torch.where, T(4, 5, dtype=b8, gen=M), T(4, 5, dtype=f16), T(4, 5)),
    op("where.scalar_int_on_f16", lambda c, x: torch.where(c, x, 7), T(4, 5, dtype=b8, gen=M), T(4, 5, dtype=f16)),
    op("where.0d_cond", torch.where, T(dtype=b8, gen=M), T(4, 5), T(4, 5)),
    op("where.nan_guard", lambda x: torch.where(x > 0, torch.log(x.clamp_min(1e-6)), torch.zeros_like(x)), T(4, 5)),
    op("where.dynamic", torch.where, T(n, 5, dtype=b8, gen=M), T(n, 5), T(n, 5)),
    op("where.dyn_broadcast", torch.where, T(n, 1, dtype=b8, gen=M), T(n, 5), T(5)),
    op("where.dyn_scalar_other", lambda c, x: torch.where(c, x, 0.0), T(n, 5, dtype=b8, gen=M), T(n, 5)),
    op("where.dyn_from_compare", lambda x, y: torch.where(x > y, x, y), T(n, 5), T(n, 5)),
    # masked_fill
    *dtypes("masked_fill", lambda x, m: x.masked_fill(m, -1.5), T(4, 5), T(4, 5, dtype=b8, gen=M), dtypes=(f32, f16, torch.bfloat16)),
    op("masked_fill.i64", lambda x, m: x.masked_fill(m, 7), T(4, 5, dtype=i64), T(4, 5, dtype=b8, gen=M)),
    op("masked_fill.bool", lambda x, m: x.masked_fill(m, True), T(4, 5, dtype=b8), T(4, 5, dtype=b8, gen=M)),
    op("masked_fill.broadcast_mask", lambda x, m: x.masked_fill(m, 0.0), T(2, 4, 5), T(1, 5, dtype=b8, gen=M)),
    op("masked_fill.neg_inf", lambda x, m: x.masked_fill(m, float("-inf")), T(4, 5), T(4, 5, dtype=b8, gen=M)),
    op("masked_fill.tensor_value", lambda x, m, v: x.masked_fill(m, v), T(4, 5), T(4, 5, dtype=b8, gen=M), T()),
    op("masked_fill.from_compare", lambda x: x.masked_fill(x < 0, 0.0), T(4, 5)),
    op("masked_fill.dynamic", lambda x, m: x.masked_fill(m, -1.5), T(n, 5), T(n, 5, dtype=b8, gen=M)),
    op("masked_fill.dyn_broadcast_mask", lambda x, m: x.masked_fill(m, 0.0), T(n, 5), T(5, dtype=b8, gen=M)),
    op("masked_fill.dynamic.i64", lambda x, m: x.masked_fill(m, 7), T(n, 5, dtype=i64), T(n, 5, dtype=b8, gen=M)),
    # masked_scatter: fills masked places from the source, in order
    op("masked_scatter", lambda x, m, s: x.masked_scatter(m, s), T(4, 5), T(4, 5, dtype=b8, gen=M), T(4, 5)),
]
