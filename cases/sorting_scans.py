"""Scans (cumsum, cumprod, cummax/cummin, logcumsumexp) and order statistics
(sort, argsort, topk, kthvalue, median, searchsorted, bucketize).

Inputs of index-returning ops are distinct, so indices are unambiguous;
`sort.stable` and `argsort.stable` instead use heavy ties on purpose, since
stability is exactly what they check.
"""

import torch

from conformance import Dyn, T, op

from ._common import ACC, acc, b8, bf16, distinct, dtypes, f16, f32, f64, i32, i64, small_ints, sorted_values

n = Dyn("n", 3, 6)
m = Dyn("m", 5, 9)
A = acc(f32)
D = distinct(0.25)
TIES = small_ints(0, 4)


def REPEATED(shape, dtype, g):
    """Sorted boundaries with each value twice: 0, 0, 1, 1, 2, 2, ..."""
    return (torch.arange(shape[-1]) // 2).expand(shape).to(dtype).contiguous()


def NAN_PERM(shape, dtype, g):
    """Distinct values with about a fifth of them nan."""
    values = torch.randperm(shape[0] * shape[1], generator=g).reshape(shape).to(dtype)
    return torch.where(torch.rand(shape, generator=g) < 0.2, float("nan"), values)

CASES = [
    # cumsum / cumprod
    *dtypes("cumsum", lambda x: torch.cumsum(x, 1), T(4, 16), dtypes=(f32, f16, bf16), tol=ACC),
    op("cumsum.dim0", lambda x: torch.cumsum(x, 0), T(16, 4), **A),
    op("cumsum.neg_dim_3d", lambda x: torch.cumsum(x, -2), T(2, 8, 3), **A),
    op("cumsum.long", lambda x: torch.cumsum(x, -1), T(2, 1024, low=0.0, high=1.0), rtol=1e-4, atol=1e-3),
    op("cumsum.i32", lambda x: torch.cumsum(x, 1), T(4, 16, dtype=i32)),
    op("cumsum.i64", lambda x: torch.cumsum(x, 0), T(4, 16, dtype=i64)),
    op("cumsum.bool", lambda x: torch.cumsum(x, 1), T(4, 16, dtype=b8)),
    op("cumsum.dtype_f64", lambda x: torch.cumsum(x, 1, dtype=f64), T(4, 16)),
    op("cumsum.1d", lambda x: torch.cumsum(x, 0), T(32), **A),
    op("cumprod", lambda x: torch.cumprod(x, 1), T(4, 16, low=0.8, high=1.25), **A),
    op("cumprod.negatives", lambda x: torch.cumprod(x, 0), T(6, 4, low=-2.0, high=2.0), **A),
    op("cumprod.i64", lambda x: torch.cumprod(x, 1), T(4, 8, dtype=i64, low=-3, high=4)),
    op("cummax", lambda x: torch.cummax(x, 1), T(4, 16, gen=D)),
    op("cummin", lambda x: torch.cummin(x, 0), T(8, 4, gen=D)),
    op("logcumsumexp", lambda x: torch.logcumsumexp(x, 1), T(4, 16), **A),
    op("cumsum.dynamic", lambda x: torch.cumsum(x, 1), T(n, 16), **A),
    op("cumsum.dyn_scan_dim", lambda x: torch.cumsum(x, 1), T(4, m), **A),
    op("cumprod.dynamic", lambda x: torch.cumprod(x, 1), T(n, m, low=0.8, high=1.25), **A),
    op("cummax.dynamic", lambda x: torch.cummax(x, 1), T(n, m, gen=D)),
    op("cummin.dynamic", lambda x: torch.cummin(x, 0), T(n, 4, gen=D)),
    op("logcumsumexp.dynamic", lambda x: torch.logcumsumexp(x, 1), T(n, m), **A),
    op("cumsum.dynamic.i32", lambda x: torch.cumsum(x, 0), T(n, 4, dtype=i32)),
    # sort / argsort
    *dtypes("sort", lambda x: torch.sort(x, 1), T(4, 16, gen=D), dtypes=(f32, f16, bf16)),
    *dtypes("sort", lambda x: torch.sort(x, 1), T(4, 16, gen=distinct()), dtypes=(i32, i64)),
    op("sort.descending", lambda x: torch.sort(x, 1, descending=True), T(4, 16, gen=D)),
    op("sort.dim0", lambda x: torch.sort(x, 0), T(8, 4, gen=D)),
    op("sort.1d", lambda x: torch.sort(x), T(64, gen=D)),
    op("sort.stable", lambda x: torch.sort(x, dim=1, stable=True), T(4, 16, gen=TIES)),
    op("sort.stable_descending", lambda x: torch.sort(x, dim=-1, descending=True, stable=True), T(4, 16, dtype=i32, gen=TIES)),
    op("sort.values_only", lambda x: torch.sort(x, 1).values, T(4, 16, gen=TIES)),
    op("sort.bool", lambda x: torch.sort(x, dim=1, stable=True), T(4, 16, dtype=b8)),
    op("sort.nan", lambda x: torch.sort(x, 1).values, T(4, 16, gen=NAN_PERM)),
    op("argsort", lambda x: torch.argsort(x, 1), T(4, 16, gen=D)),
    op("argsort.descending", lambda x: torch.argsort(x, 0, descending=True), T(8, 4, gen=D)),
    op("argsort.stable", lambda x: torch.argsort(x, dim=-1, stable=True), T(4, 16, gen=TIES)),
    op("msort", torch.msort, T(8, 4, gen=D)),
    op("sort.dynamic", lambda x: torch.sort(x, 1), T(n, 16, gen=D)),
    op("sort.dyn_sorted_dim", lambda x: torch.sort(x, -1, descending=True), T(4, m, gen=D)),
    op("argsort.dynamic", lambda x: torch.argsort(x, 1), T(n, m, gen=D)),
    # topk
    *dtypes("topk", lambda x: torch.topk(x, 3), T(4, 16, gen=D), dtypes=(f32, f16)),
    *dtypes("topk", lambda x: torch.topk(x, 3), T(4, 16, gen=distinct()), dtypes=(i32, i64)),
    op("topk.smallest", lambda x: torch.topk(x, 4, largest=False), T(4, 16, gen=D)),
    op("topk.dim0", lambda x: torch.topk(x, 2, dim=0), T(8, 4, gen=D)),
    op("topk.k1", lambda x: torch.topk(x, 1), T(4, 16, gen=D)),
    op("topk.k_all", lambda x: torch.topk(x, 16), T(4, 16, gen=D)),
    op("topk.values_only_ties", lambda x: torch.topk(x, 5).values, T(4, 16, gen=TIES)),
    op("topk.dynamic", lambda x: torch.topk(x, 3), T(n, 16, gen=D)),
    op("topk.dyn_dim", lambda x: torch.topk(x, 2, dim=1), T(4, m, gen=D)),
    op("topk.dyn_smallest", lambda x: torch.topk(x, 2, largest=False), T(n, m, gen=D)),  # k <= every size of m
    op("kthvalue.dynamic", lambda x: torch.kthvalue(x, 2, 1), T(n, m, gen=D)),
    op("sort.dyn_stable", lambda x: torch.sort(x, dim=1, stable=True), T(n, 16, gen=TIES)),
    # order statistics
    op("kthvalue", lambda x: torch.kthvalue(x, 3, 1), T(4, 16, gen=D)),
    op("median.dim", lambda x: torch.median(x, 1), T(4, 15, gen=D), ops=("aten.median",)),
    op("median.even", lambda x: torch.median(x, 1).values, T(4, 16, gen=D), ops=("aten.median",)),
    op("median", torch.median, T(4, 16, gen=D)),
    op("nanmedian", lambda x: torch.nanmedian(x, 1).values, T(4, 16, gen=NAN_PERM)),
    # searching sorted sequences
    op("searchsorted", lambda b, x: torch.searchsorted(b, x), T(16, gen=sorted_values()), T(4, 8, low=-6.0, high=6.0)),
    op("searchsorted.right", lambda b, x: torch.searchsorted(b, x, right=True), T(16, gen=REPEATED), T(4, 8, gen=small_ints(-1, 9))),
    op("searchsorted.batched", lambda b, x: torch.searchsorted(b, x), T(4, 16, gen=sorted_values()), T(4, 6, low=-6.0, high=6.0)),
    op("searchsorted.i64", lambda b, x: torch.searchsorted(b, x), T(10, dtype=i64, gen=lambda s, d, g: torch.arange(0, 30, 3, dtype=d)), T(4, 8, dtype=i64, low=-2, high=32)),
    op("bucketize", lambda x, b: torch.bucketize(x, b), T(4, 8, low=-6.0, high=6.0), T(16, gen=sorted_values())),
    op("bucketize.right", lambda x, b: torch.bucketize(x, b, right=True), T(4, 8, gen=small_ints(-1, 9)), T(8, gen=lambda s, d, g: torch.arange(8, dtype=d))),
    op("searchsorted.dynamic", lambda b, x: torch.searchsorted(b, x), T(16, gen=sorted_values()), T(n, 8, low=-6.0, high=6.0)),
    # differences
    op("diff", lambda x: torch.diff(x, dim=1), T(4, 16), ops=("aten.diff",)),
    op("diff.n2_dim0", lambda x: torch.diff(x, n=2, dim=0), T(6, 4), ops=("aten.diff",)),
]
