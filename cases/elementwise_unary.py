"""Elementwise unary math: exp/log family, trigonometry, rounding, special functions.

Inputs stay inside each op's domain (log of positives, asin in (-1, 1), ...)
unless the case is about the edge itself (`nan_to_num`, `isnan`). Integer
variants check both integer kernels (abs, neg) and int->float promotion
(exp.i32 is float32).
"""

import torch

from conformance import Dyn, T, op

from ._common import NUMERIC, b8, bf16, distinct, dtypes, f16, f32, f64, i32, i64, specials

n = Dyn("n", 3, 6)
POS = dict(low=0.1, high=10.0)  # strictly positive
UNIT = dict(low=-0.99, high=0.99)  # inside (-1, 1)

CASES = [
    # sign and magnitude
    *dtypes("abs", torch.abs, T(3, 4), dtypes=NUMERIC),
    *dtypes("neg", torch.neg, T(3, 4), dtypes=NUMERIC),
    *dtypes("sign", torch.sign, T(3, 4, gen=distinct(1.0)), dtypes=(f32, f16, i32)),
    op("sgn", torch.sgn, T(3, 4, gen=distinct(1.0))),
    *dtypes("square", torch.square, T(3, 4), dtypes=(f32, f16, i32)),
    op("square.bool", torch.square, T(3, 4, dtype=b8), ops=("aten.square",)),
    op("reciprocal", torch.reciprocal, T(3, 4, low=0.25, high=8.0)),
    op("reciprocal.f16", torch.reciprocal, T(3, 4, dtype=f16, low=0.25, high=4.0)),
    op("reciprocal.i32", torch.reciprocal, T(3, 4, dtype=i32, low=1, high=9)),
    op("signbit", torch.signbit, T(3, 4, gen=distinct(1.0))),
    op("abs.dynamic", torch.abs, T(n, 5)),
    op("neg.dynamic", torch.neg, T(n, 5)),
    # exponentials and logarithms
    *dtypes("exp", torch.exp, T(3, 4, low=-4.0, high=4.0)),
    op("exp.f64", torch.exp, T(3, 4, dtype=f64)),
    op("exp.i32", torch.exp, T(3, 4, dtype=i32, low=-5, high=5)),
    op("exp2", torch.exp2, T(3, 4, low=-4.0, high=4.0)),
    *dtypes("expm1", torch.expm1, T(3, 4, low=-2.0, high=2.0), dtypes=(f32, f16)),
    op("expm1.small", torch.expm1, T(3, 4, low=-1e-4, high=1e-4)),
    *dtypes("log", torch.log, T(3, 4, **POS)),
    op("log.i64", torch.log, T(3, 4, dtype=i64, low=1, high=100)),
    op("log2", torch.log2, T(3, 4, **POS)),
    op("log10", torch.log10, T(3, 4, **POS)),
    *dtypes("log1p", torch.log1p, T(3, 4, low=-0.9, high=4.0), dtypes=(f32, f16)),
    op("log1p.small", torch.log1p, T(3, 4, low=-1e-4, high=1e-4)),
    op("exp.dynamic", torch.exp, T(n, 4, low=-4.0, high=4.0)),
    op("log.dynamic", torch.log, T(2, n, **POS)),
    # roots and powers of one argument
    *dtypes("sqrt", torch.sqrt, T(3, 4, low=0.0, high=10.0)),
    op("sqrt.i32", torch.sqrt, T(3, 4, dtype=i32, low=0, high=100)),
    *dtypes("rsqrt", torch.rsqrt, T(3, 4, **POS), dtypes=(f32, f16)),
    op("sqrt.dynamic", torch.sqrt, T(n, n, low=0.0, high=10.0)),
    # trigonometric and hyperbolic
    *dtypes("sin", torch.sin, T(3, 4)),
    *dtypes("cos", torch.cos, T(3, 4)),
    op("tan", torch.tan, T(3, 4, low=-1.4, high=1.4)),
    op("asin", torch.asin, T(3, 4, **UNIT)),
    op("acos", torch.acos, T(3, 4, **UNIT)),
    *dtypes("atan", torch.atan, T(3, 4), dtypes=(f32, f16)),
    op("sinh", torch.sinh, T(3, 4, low=-4.0, high=4.0)),
    op("cosh", torch.cosh, T(3, 4, low=-4.0, high=4.0)),
    op("asinh", torch.asinh, T(3, 4)),
    op("acosh", torch.acosh, T(3, 4, low=1.01, high=10.0)),
    op("atanh", torch.atanh, T(3, 4, **UNIT)),
    op("deg2rad", torch.deg2rad, T(3, 4, low=-360.0, high=360.0)),
    op("rad2deg", torch.rad2deg, T(3, 4, low=-6.3, high=6.3)),
    op("sin.dynamic", torch.sin, T(n, 4)),
    op("cos.dyn_last", torch.cos, T(3, n)),
    op("atan.dynamic", torch.atan, T(n, 3, 2)),
    # rounding
    *dtypes("floor", torch.floor, T(3, 4), dtypes=(f32, f16, bf16)),
    *dtypes("ceil", torch.ceil, T(3, 4), dtypes=(f32, f16, bf16)),
    *dtypes("trunc", torch.trunc, T(3, 4), dtypes=(f32, f16)),
    *dtypes("round", torch.round, T(3, 4), dtypes=(f32, f16)),
    # Exact halves: round-half-to-even (0.5 -> 0, 1.5 -> 2, -2.5 -> -2).
    op("round.half_even", lambda x: torch.round(x + 0.5), T(3, 8, gen=distinct(1.0, offset=12.0))),
    op("round.decimals", lambda x: torch.round(x, decimals=2), T(3, 4)),
    op("frac", torch.frac, T(3, 4)),
    op("floor.i64", torch.floor, T(3, 4, dtype=i64)),
    op("floor.dynamic", torch.floor, T(n, 4)),
    op("round.dynamic", torch.round, T(4, n)),
    # special functions
    *dtypes("erf", torch.erf, T(3, 4, low=-3.0, high=3.0)),
    op("erfc", torch.erfc, T(3, 4, low=-3.0, high=3.0)),
    op("erfinv", torch.erfinv, T(3, 4, **UNIT)),
    op("lgamma", torch.lgamma, T(3, 4, **POS)),
    op("digamma", torch.digamma, T(3, 4, low=0.5, high=10.0)),
    op("i0", torch.i0, T(3, 4, low=-4.0, high=4.0)),
    op("sinc", torch.sinc, T(3, 4, low=-4.0, high=4.0)),
    op("logit", lambda x: torch.logit(x), T(3, 4, low=0.01, high=0.99)),
    op("logit.eps", lambda x: torch.logit(x, eps=1e-3), T(3, 4, low=0.0, high=1.0), ops=("aten.logit",)),
    op("erf.dynamic", torch.erf, T(n, 4, low=-3.0, high=3.0)),
    op("exp2.dynamic", torch.exp2, T(n, 4, low=-4.0, high=4.0)),
    op("expm1.dynamic", torch.expm1, T(n, 4, low=-2.0, high=2.0)),
    op("log1p.dynamic", torch.log1p, T(n, 4, low=-0.9, high=4.0)),
    op("rsqrt.dynamic", torch.rsqrt, T(n, 4, **POS)),
    op("reciprocal.dynamic", torch.reciprocal, T(n, 4, low=0.25, high=8.0)),
    op("sign.dynamic", torch.sign, T(n, 4, gen=distinct(1.0))),
    op("ceil.dynamic", torch.ceil, T(2, n)),
    op("trunc.dynamic", torch.trunc, T(n, 3)),
    op("abs.dynamic.i32", torch.abs, T(n, 4, dtype=i32)),
    op("neg.dynamic.i64", torch.neg, T(n, 4, dtype=i64)),
    op("bitwise_not.dynamic.i32", torch.bitwise_not, T(n, 4, dtype=i32)),
    op("nan_to_num.dynamic", torch.nan_to_num, T(n, 8, gen=specials())),
    op("exp.dynamic.f16", torch.exp, T(n, 4, dtype=f16)),
    # bit patterns
    *dtypes("bitwise_not", torch.bitwise_not, T(3, 4), dtypes=(i32, i64, b8)),
    # non-finite values
    op("nan_to_num", torch.nan_to_num, T(4, 8, gen=specials())),
    op("nan_to_num.values", lambda x: torch.nan_to_num(x, nan=0.0, posinf=100.0, neginf=-100.0), T(4, 8, gen=specials()), ops=("aten.nan_to_num",)),
    op("nan_to_num.f16", torch.nan_to_num, T(4, 8, dtype=f16, gen=specials())),
    op("exp.overflow", torch.exp, T(3, 4, low=80.0, high=100.0)),
    op("exp.overflow.f16", torch.exp, T(3, 4, dtype=f16, low=8.0, high=14.0), ops=("aten.exp",)),
    op("log.nonpositive", torch.log, T(3, 4, gen=specials()), ops=("aten.log",)),
    op("sqrt.negative", torch.sqrt, T(3, 4, low=-9.0, high=9.0), ops=("aten.sqrt",)),
]
