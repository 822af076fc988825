"""Reductions: sum, mean, amax/amin, max/min with indices, argmax/argmin,
var/std (with correction), prod, logsumexp, any/all, norms, nan-aware ones.

Float reductions carry ACC tolerances (summation order is the compiler's
choice). Integer and bool sums are exact and return int64. argmax/argmin
inputs are distinct (no ties) except in `argmax.ties`, which checks torch's
documented first-occurrence rule.
"""

import torch

from conformance import Dyn, T, op

from ._common import ACC, ACC_LARGE, FLOATS, acc, b8, bf16, distinct, dtypes, f16, f32, f64, i32, i64, mask, small_ints, u8, with_nans

n = Dyn("n", 3, 7)
m = Dyn("m", 4, 9)
A = acc(f32)  # rtol/atol of a float32 accumulating op
AL = acc(f32, ACC_LARGE)
D = distinct(0.25)

CASES = [
    # sum
    *dtypes("sum", torch.sum, T(8, 32), dtypes=FLOATS, tol=ACC_LARGE),
    *dtypes("sum.int", torch.sum, T(8, 32), dtypes=(i32, i64, b8, u8), ops=("aten.sum",)),
    op("sum.dim0", lambda x: x.sum(0), T(8, 32), **AL),
    op("sum.dim1", lambda x: x.sum(1), T(8, 32), **AL),
    op("sum.dim_keepdim", lambda x: x.sum(1, keepdim=True), T(8, 32), **AL),
    op("sum.neg_dim", lambda x: x.sum(-2), T(3, 8, 16), **AL),
    op("sum.dims", lambda x: x.sum((0, 2)), T(3, 8, 16), **AL),
    op("sum.dims_keepdim", lambda x: x.sum((1, 2), keepdim=True), T(2, 3, 8, 16), **AL),
    op("sum.dtype_f64", lambda x: x.sum(1, dtype=f64), T(8, 32)),
    op("sum.f16_to_f32", lambda x: x.sum(1, dtype=f32), T(8, 64, dtype=f16), **A),
    op("sum.i32_dim", lambda x: x.sum(0), T(8, 32, dtype=i32)),
    op("sum.bool_dim", lambda x: x.sum(-1), T(8, 32, dtype=b8)),
    # Found by `conformance fuzz --seed 0` (a 14-op program, reduced by `conformance reduce`): a comparison's
    # i1 result summed over every dim with keepdim; IREE's llvm-cpu gives 1 where eager gives 2.
    op("sum.compare_all_dims_keepdim", lambda x: (x >= x).sum((0, 1), keepdim=True), T(2, 1, dtype=torch.int8), ops=("aten.sum",)),
    op("sum.0d", torch.sum, T()),
    op("sum.large", torch.sum, T(64, 1024, low=0.0, high=1.0), rtol=1e-4, atol=1e-2),
    # mean
    *dtypes("mean", torch.mean, T(8, 32), dtypes=FLOATS, tol=ACC),
    op("mean.dim", lambda x: x.mean(1), T(8, 32), **A),
    op("mean.dim_keepdim", lambda x: x.mean(0, keepdim=True), T(8, 32), **A),
    op("mean.dims", lambda x: x.mean((-1, -2)), T(2, 3, 8, 8), **A),
    op("mean.dtype_f32_from_f16", lambda x: x.mean(-1, dtype=f32), T(4, 64, dtype=f16), **A),
    op("mean.0d", torch.mean, T()),
    # amax / amin
    *dtypes("amax", lambda x: x.amax(1), T(8, 32), dtypes=(f32, f16, bf16, i32, i64)),
    *dtypes("amin", lambda x: x.amin(0), T(8, 32), dtypes=(f32, f16, i32)),
    op("amax.all", torch.amax, T(8, 32)),
    op("amax.dims_keepdim", lambda x: x.amax((0, 2), keepdim=True), T(3, 4, 5)),
    op("amin.neg_dim", lambda x: x.amin(-1), T(3, 4, 5)),
    op("amax.bool", lambda x: x.amax(1), T(4, 6, dtype=b8)),
    # Found by `conformance fuzz --backend tosa --seed 1` (as all, any, bitwise_xor on booleans): a reduction
    # minus itself squeezed, broadcast to all their pairwise differences. IREE 3.13's llvm-cpu gives zeros.
    op("amax.pairwise_difference", lambda x: x.amax(1, keepdim=True).squeeze(1) - x.amax(1, keepdim=True), T(4, 3, 1)),
    op("all.pairwise_xor", lambda x: x.all(1, keepdim=True).squeeze(1) ^ x.all(1, keepdim=True), T(4, 2, 1, dtype=b8, gen=mask(0.7))),
    op("amax.nan", lambda x: x.amax(1), T(4, 8, gen=with_nans(0.1))),
    op("amax.0d", torch.amax, T()),
    # max / min: all-reduce, and per dim with indices
    op("max", torch.max, T(8, 32)),
    op("min", torch.min, T(8, 32)),
    op("max.dim", lambda x: torch.max(x, 1), T(4, 16, gen=D)),
    op("max.dim_keepdim", lambda x: torch.max(x, 0, keepdim=True), T(4, 16, gen=D)),
    op("min.dim", lambda x: torch.min(x, -1), T(3, 4, 5, gen=D)),
    op("max.dim.i32", lambda x: torch.max(x, 1), T(4, 16, dtype=i32, gen=distinct())),
    op("max.dim_values", lambda x: torch.max(x, 1).values, T(4, 16, dtype=f16)),
    # argmax / argmin
    op("argmax", lambda x: torch.argmax(x, 1), T(8, 32, gen=D)),
    op("argmax.flat", torch.argmax, T(8, 32, gen=D)),
    op("argmax.keepdim", lambda x: torch.argmax(x, 0, keepdim=True), T(8, 32, gen=D)),
    op("argmax.f16", lambda x: torch.argmax(x, -1), T(8, 32, dtype=f16, gen=D)),
    op("argmax.i32", lambda x: torch.argmax(x, -1), T(8, 32, dtype=i32, gen=distinct())),
    op("argmax.ties", lambda x: torch.argmax(x, 1), T(8, 32, dtype=i32, gen=small_ints(0, 3))),
    op("argmin", lambda x: torch.argmin(x, 1), T(8, 32, gen=D)),
    op("argmin.flat", torch.argmin, T(8, 32, gen=D)),
    op("argmin.3d", lambda x: torch.argmin(x, 1), T(3, 8, 5, gen=D)),
    op("argmin.ties", lambda x: torch.argmin(x, 0), T(8, 32, gen=small_ints(0, 3))),
    # Found by `conformance fuzz --backend tosa` (reduced by `conformance reduce`): an arg-reduction whose result
    # is transposed. iree-compile (3.13, any target) builds an invalid linalg.yield from the pair.
    op("argmax.transposed", lambda x: torch.argmax(x, 0).t(), T(3, 4, 5, gen=D)),
    op("argmin.permuted", lambda x: torch.argmin(x, 1).permute(0, 2, 1), T(2, 3, 4, 5, gen=D)),
    op("argmax.0d", torch.argmax, T()),
    # variance and standard deviation
    op("var", torch.var, T(8, 32), **A),
    op("var.dim", lambda x: x.var(1), T(8, 32), **A),
    op("var.correction0", lambda x: torch.var(x, 1, correction=0), T(8, 32), **A),
    op("var.correction2", lambda x: torch.var(x, 1, correction=2), T(8, 32), **A),
    op("var.dims_keepdim", lambda x: torch.var(x, (0, 2), keepdim=True), T(4, 5, 6), **A),
    op("var.unbiased_false", lambda x: torch.var(x, 0, unbiased=False), T(8, 32), **A),
    op("var.f16", lambda x: x.var(-1), T(8, 32, dtype=f16), **acc(f16)),
    op("var.offset", lambda x: (x + 100.0).var(1), T(8, 32), rtol=1e-3, atol=1e-3),
    op("std", torch.std, T(8, 32), **A),
    op("std.dim", lambda x: x.std(1), T(8, 32), **A),
    op("std.correction0_keepdim", lambda x: torch.std(x, -1, correction=0, keepdim=True), T(8, 32), **A),
    op("std.bf16", lambda x: x.std(-1), T(8, 32, dtype=bf16), **acc(bf16)),
    op("var_mean", lambda x: torch.var_mean(x, 1), T(8, 32), **A),
    op("std_mean", lambda x: torch.std_mean(x, 0, correction=0), T(8, 32), **A),
    # prod
    op("prod", torch.prod, T(4, 8, low=0.5, high=1.5), **A),
    op("prod.dim", lambda x: x.prod(1), T(4, 8), rtol=1e-4, atol=1e-2),
    op("prod.dim_keepdim", lambda x: x.prod(0, keepdim=True), T(4, 8, low=-2.0, high=2.0), **A),
    op("prod.i32", lambda x: x.prod(1), T(4, 8, dtype=i32, low=-3, high=4)),
    op("prod.f16", lambda x: x.prod(-1), T(4, 8, dtype=f16, low=0.5, high=1.5), **acc(f16)),
    op("prod.bool", lambda x: x.prod(1), T(4, 8, dtype=b8, gen=mask(0.9))),
    # logsumexp
    op("logsumexp", lambda x: torch.logsumexp(x, 1), T(8, 32), **A),
    op("logsumexp.dims_keepdim", lambda x: torch.logsumexp(x, (0, 1), keepdim=True), T(4, 8, 3), **A),
    op("logsumexp.large", lambda x: torch.logsumexp(x, -1), T(8, 32, low=80.0, high=100.0), **A),
    op("logsumexp.neg_inf", lambda x: torch.logsumexp(x.masked_fill(x < 0, float("-inf")), -1), T(8, 32), **A),
    op("logsumexp.f16", lambda x: torch.logsumexp(x, -1), T(8, 32, dtype=f16), **acc(f16)),
    # any / all
    *dtypes("any", torch.any, T(4, 8, gen=mask(0.05)), dtypes=(b8,)),
    *dtypes("all", torch.all, T(4, 8, gen=mask(0.95)), dtypes=(b8,)),
    op("any.dim", lambda x: x.any(1), T(4, 8, dtype=b8, gen=mask(0.1))),
    op("all.dim_keepdim", lambda x: x.all(0, keepdim=True), T(4, 8, dtype=b8, gen=mask(0.8))),
    op("any.f32", lambda x: x.any(-1), T(4, 8, gen=small_ints(0, 2))),
    op("all.i32", lambda x: x.all(-1), T(4, 8, dtype=i32, low=0, high=3)),
    op("count_nonzero", lambda x: torch.count_nonzero(x, 1), T(4, 8, gen=small_ints(-1, 2))),
    # norms
    op("linalg_vector_norm", torch.linalg.vector_norm, T(8, 32), **A),
    op("linalg_vector_norm.ord1_dim", lambda x: torch.linalg.vector_norm(x, 1, dim=1), T(8, 32), **A),
    op("linalg_vector_norm.inf", lambda x: torch.linalg.vector_norm(x, float("inf"), dim=-1), T(8, 32)),
    op("linalg_vector_norm.ord3_keepdim", lambda x: torch.linalg.vector_norm(x, 3, dim=0, keepdim=True), T(8, 32), **A),
    op("norm.fro", lambda x: torch.norm(x), T(8, 32), **A, ops=("aten.linalg_vector_norm",)),
    # nan-aware
    op("nansum", lambda x: torch.nansum(x, 1), T(4, 16, gen=with_nans()), **A),
    op("nanmean", lambda x: torch.nanmean(x, 1), T(4, 16, gen=with_nans()), **A),
    op("sum.nan", lambda x: x.sum(1), T(4, 16, gen=with_nans(0.1)), **A),
    op("aminmax", lambda x: torch.aminmax(x, dim=1), T(8, 32)),
    # dynamic shapes: the batch, and the reduced dimension itself
    op("sum.dynamic", lambda x: x.sum(1), T(n, 32), **AL),
    op("sum.dyn_reduced", lambda x: x.sum(1), T(8, m), **AL),
    op("sum.dyn_all", torch.sum, T(n, m), **AL),
    op("mean.dynamic", lambda x: x.mean(-1), T(n, m), **A),
    op("mean.dyn_keepdim", lambda x: x.mean(0, keepdim=True), T(n, 16), **A),
    op("amax.dynamic", lambda x: x.amax(1), T(n, m)),
    op("amin.dynamic", lambda x: x.amin(0), T(n, 8)),
    op("max.dyn_dim", lambda x: torch.max(x, 1), T(n, m, gen=D)),
    op("argmax.dynamic", lambda x: torch.argmax(x, 1), T(n, m, gen=D)),
    op("argmin.dynamic", lambda x: torch.argmin(x, 0), T(n, 8, gen=D)),
    op("var.dynamic", lambda x: x.var(1), T(n, m), **A),
    op("std.dynamic", lambda x: x.std(0, correction=0), T(n, 8), **A),
    op("prod.dynamic", lambda x: x.prod(1), T(n, 6, low=0.5, high=1.5), **A),
    op("logsumexp.dynamic", lambda x: torch.logsumexp(x, -1), T(n, m), **A),
    op("any.dynamic", lambda x: x.any(1), T(n, m, dtype=b8, gen=mask(0.2))),
    op("all.dynamic", lambda x: x.all(0), T(n, m, dtype=b8, gen=mask(0.8))),
    op("sum.dynamic.i32", lambda x: x.sum(0), T(n, 8, dtype=i32)),
    op("linalg_vector_norm.dynamic", lambda x: torch.linalg.vector_norm(x, dim=-1), T(n, m), **A),
]
