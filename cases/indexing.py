"""Indexing: index_select, gather, scatter (+add/reduce), index_put (with and
without accumulate), advanced indexing x[idx], slicing with steps and
negative bounds, select, narrow, take_along_dim, index_add/copy/fill, and
the data-dependent ones (x[mask], masked_select, nonzero).

Index tensors that write (scatter, index_put without accumulate, index_copy)
hold no duplicates, since torch leaves the winner of a collision undefined.
"""

import torch
import torch.nn.functional as F

from conformance import Dyn, T, op

from ._common import b8, bf16, dtypes, f16, f32, i32, i64, mask, perm_cols, perm_rows, unique_index

n = Dyn("n", 3, 6)
k = Dyn("k", 2, 5)


def I(*shape, high, low=0, dtype=i64):
    """An index tensor in [low, high)."""
    return T(*shape, dtype=dtype, low=low, high=high)


CASES = [
    # index_select
    *dtypes("index_select", lambda x, i: torch.index_select(x, 0, i), T(8, 4), I(5, high=8), dtypes=(f32, f16, bf16, i64, b8)),
    op("index_select.dim1", lambda x, i: torch.index_select(x, 1, i), T(4, 8), I(6, high=8)),
    op("index_select.neg_dim", lambda x, i: x.index_select(-1, i), T(2, 3, 8), I(3, high=8)),
    op("index_select.i32_index", lambda x, i: torch.index_select(x, 0, i), T(8, 4), I(5, high=8, dtype=i32)),
    op("index_select.0d_index", lambda x, i: torch.index_select(x, 0, i), T(8, 4), I(high=8)),
    op("index_select.dynamic", lambda x, i: torch.index_select(x, 0, i), T(n, 4), I(5, high=3)),
    op("index_select.dyn_index", lambda x, i: torch.index_select(x, 0, i), T(8, 4), I(k, high=8)),
    # found by `conformance fuzz --backend stablehlo`: a gather along a static dim of a dynamic tensor
    op("index_select.dyn_dim1", lambda x, i: torch.index_select(x, 1, i), T(n, 4), I(3, high=4)),
    # gather
    *dtypes("gather", lambda x, i: torch.gather(x, 1, i), T(3, 4), I(3, 2, high=4), dtypes=(f32, f16, i32)),
    op("gather.dim0", lambda x, i: torch.gather(x, 0, i), T(4, 5), I(6, 5, high=4)),
    op("gather.neg_dim_3d", lambda x, i: torch.gather(x, -1, i), T(2, 3, 8), I(2, 3, 4, high=8)),
    op("gather.smaller_index", lambda x, i: torch.gather(x, 1, i), T(4, 8), I(2, 3, high=8)),
    op("gather.dynamic", lambda x, i: torch.gather(x, 1, i), T(n, 8), I(n, 3, high=8)),
    op("gather.dyn_index", lambda x, i: torch.gather(x, 1, i), T(4, 8), I(4, k, high=8)),
    op("take_along_dim", lambda x, i: torch.take_along_dim(x, i, 1), T(4, 8), I(4, 3, high=8)),
    op("take_along_dim.argsort", lambda x: torch.take_along_dim(x, x.argsort(1), 1), T(4, 8), ops=("aten.take_along_dim",)),
    op("take", torch.take, T(4, 8), I(5, high=32)),
    # scatter: distinct targets
    op("scatter.src", lambda x, i, s: torch.scatter(x, 0, i, s), T(5, 4), T(3, 4, dtype=i64, gen=perm_cols(5)), T(3, 4)),
    op("scatter.dim1", lambda x, i, s: torch.scatter(x, 1, i, s), T(3, 6), T(3, 4, dtype=i64, gen=perm_rows(6)), T(3, 5)),
    op("scatter.value", lambda x, i: torch.scatter(x, 1, i, -1.0), T(3, 6), T(3, 2, dtype=i64, gen=perm_rows(6))),
    op("scatter.f16", lambda x, i, s: torch.scatter(x, 1, i, s), T(3, 6, dtype=f16), T(3, 4, dtype=i64, gen=perm_rows(6)), T(3, 4, dtype=f16)),
    op("scatter.i64", lambda x, i, s: torch.scatter(x, 1, i, s), T(3, 6, dtype=i64), T(3, 4, dtype=i64, gen=perm_rows(6)), T(3, 4, dtype=i64)),
    op("scatter.dynamic", lambda x, i, s: torch.scatter(x, 1, i, s), T(n, 6), T(n, 4, dtype=i64, gen=perm_rows(6)), T(n, 4)),
    # scatter_add / scatter_reduce: duplicates combine
    op("scatter_add", lambda x, i, s: torch.scatter_add(x, 0, i, s), T(4, 5), I(8, 5, high=4), T(8, 5), rtol=1e-5, atol=1e-5),
    op("scatter_add.dim1", lambda x, i, s: torch.scatter_add(x, 1, i, s), T(3, 4), I(3, 6, high=4), T(3, 6), rtol=1e-5, atol=1e-5),
    op("scatter_add.i32", lambda x, i, s: torch.scatter_add(x, 1, i, s), T(3, 4, dtype=i32), I(3, 6, high=4), T(3, 6, dtype=i32)),
    op("scatter_add.dynamic", lambda x, i, s: torch.scatter_add(x, 0, i, s), T(4, 5), I(n, 5, high=4), T(n, 5), rtol=1e-5, atol=1e-5),
    op("scatter_reduce.sum", lambda x, i, s: x.scatter_reduce(0, i, s, "sum"), T(4, 5), I(8, 5, high=4), T(8, 5), rtol=1e-5, atol=1e-5),
    op("scatter_reduce.prod", lambda x, i, s: x.scatter_reduce(0, i, s, "prod"), T(4, 5, low=0.5, high=1.5), I(8, 5, high=4), T(8, 5, low=0.5, high=1.5), rtol=1e-5, atol=1e-5),
    op("scatter_reduce.amax", lambda x, i, s: x.scatter_reduce(0, i, s, "amax"), T(4, 5), I(8, 5, high=4), T(8, 5)),
    op("scatter_reduce.amin_exclude_self", lambda x, i, s: x.scatter_reduce(1, i, s, "amin", include_self=False), T(3, 4), I(3, 8, high=4), T(3, 8)),
    op("scatter_reduce.mean", lambda x, i, s: x.scatter_reduce(0, i, s, "mean"), T(4, 5), I(8, 5, high=4), T(8, 5), rtol=1e-5, atol=1e-5),
    op("scatter_reduce.mean_exclude_self", lambda x, i, s: x.scatter_reduce(0, i, s, "mean", include_self=False), T(4, 5), I(8, 5, high=4), T(8, 5), rtol=1e-5, atol=1e-5),
    # index_put: x[idx] = v without / with accumulate
    op("index_put", lambda x, i, v: torch.index_put(x, (i,), v), T(8, 4), T(5, dtype=i64, gen=unique_index(8)), T(5, 4)),
    op("index_put.broadcast_value", lambda x, i, v: torch.index_put(x, (i,), v), T(8, 4), T(3, dtype=i64, gen=unique_index(8)), T(4)),
    op("index_put.scalar_value", lambda x, i, v: torch.index_put(x, (i,), v), T(8, 4), T(3, dtype=i64, gen=unique_index(8)), T()),
    op("index_put.two_indices", lambda x, i, j, v: torch.index_put(x, (i, j), v), T(6, 5), T(4, dtype=i64, gen=unique_index(6)), I(4, high=5), T(4)),
    op("index_put.accumulate", lambda x, i, v: torch.index_put(x, (i,), v, accumulate=True), T(8, 4), I(12, high=8), T(12, 4), rtol=1e-5, atol=1e-5),
    op("index_put.accumulate_two_indices", lambda x, i, j, v: torch.index_put(x, (i, j), v, accumulate=True), T(6, 5), I(10, high=6), I(10, high=5), T(10), rtol=1e-5, atol=1e-5),
    op("index_put.accumulate.i64", lambda x, i, v: torch.index_put(x, (i,), v, accumulate=True), T(8, dtype=i64), I(12, high=8), T(12, dtype=i64)),
    op("index_put.neg_index", lambda x, i, v: torch.index_put(x, (i,), v), T(8, 4), T(3, dtype=i64, gen=lambda s, d, g: torch.randperm(8, generator=g)[:3] - 8), T(3, 4)),
    op("index_put.bool_mask", lambda x, m: torch.index_put(x, (m,), torch.tensor(0.0)), T(4, 5), T(4, 5, dtype=b8, gen=mask())),
    op("index_put.dynamic", lambda x, i, v: torch.index_put(x, (i,), v, accumulate=True), T(n, 4), I(5, high=3), T(5, 4), rtol=1e-5, atol=1e-5),
    op("index_put.dyn_values", lambda x, i, v: torch.index_put(x, (i,), v, accumulate=True), T(8, 4), I(k, high=8), T(k, 4), rtol=1e-5, atol=1e-5),
    # advanced indexing
    op("index.tensor", lambda x, i: x[i], T(8, 4), I(5, high=8)),
    op("index.tensor.f16", lambda x, i: x[i], T(8, 4, dtype=f16), I(5, high=8), ops=("aten.index",)),
    op("index.tensor_2d_index", lambda x, i: x[i], T(8, 4), I(2, 3, high=8), ops=("aten.index",)),
    op("index.two_tensors", lambda x, i, j: x[i, j], T(6, 5), I(4, high=6), I(4, high=5), ops=("aten.index",)),
    op("index.broadcast_tensors", lambda x, i, j: x[i, j], T(6, 5), I(3, 1, high=6), I(1, 4, high=5), ops=("aten.index",)),
    op("index.second_dim", lambda x, i: x[:, i], T(4, 8), I(5, high=8), ops=("aten.index",)),
    op("index.ellipsis_last", lambda x, i: x[..., i], T(2, 3, 8), I(5, high=8), ops=("aten.index",)),
    op("index.non_adjacent", lambda x, i, j: x[i, :, j], T(4, 3, 5), I(2, high=4), I(2, high=5), ops=("aten.index",)),
    op("index.negative_entries", lambda x, i: x[i], T(8, 4), I(6, low=-8, high=8), ops=("aten.index",)),
    op("index.with_slice", lambda x, i: x[1:, i], T(5, 8), I(3, high=8), ops=("aten.index",)),
    op("index.dynamic", lambda x, i: x[i], T(n, 4), I(5, high=3), ops=("aten.index",)),
    op("index.dyn_index", lambda x, i: x[:, i], T(4, 8), I(k, high=8), ops=("aten.index",)),
    # data-dependent output sizes
    op("index.bool_mask", lambda x, m: x[m], T(4, 5), T(4, 5, dtype=b8, gen=mask()), ops=("aten.index",)),
    op("masked_select", torch.masked_select, T(4, 5), T(4, 5, dtype=b8, gen=mask())),
    op("nonzero", torch.nonzero, T(4, 5, dtype=b8, gen=mask())),
    # basic slicing (no tensors involved)
    op("slice", lambda x: x[1:5], T(8, 4)),
    op("slice.step", lambda x: x[::2], T(9, 4)),
    op("slice.start_stop_step", lambda x: x[1:-1:3], T(11, 4)),
    op("slice.negative_start", lambda x: x[-3:], T(8, 4)),
    op("slice.last_dim_step", lambda x: x[..., 1::3], T(2, 3, 10)),
    op("slice.multi_dim", lambda x: x[1:3, ::2, -2:], T(4, 6, 5)),
    op("slice.end_past_size", lambda x: x[:, 2:100], T(3, 6)),
    op("slice.empty", lambda x: x[5:2], T(8, 4)),
    op("slice.none_newaxis", lambda x: x[None, :, None, 1:], T(3, 4), ops=("aten.unsqueeze", "aten.slice")),
    op("slice.i64", lambda x: x[:, 1::2], T(4, 6, dtype=i64)),
    op("slice.bool", lambda x: x[1:, ::2], T(4, 6, dtype=b8)),
    # Slicing a dynamic dim itself (x[1:]) cannot be exported with unbounded Dims: the
    # result could have size 1, which torch.export specialises. So these slice static
    # dims of dynamic tensors, or take a fixed-size piece of the dynamic dim.
    op("slice.dynamic", lambda x: x[:, 1:-1], T(n, 6)),
    op("slice.dyn_step", lambda x: x[:, ::2], T(n, 7)),
    op("slice.dyn_negative", lambda x: x[-2:, 1:], T(n, 5)),
    # select / narrow / unbind
    op("select", lambda x: x.select(0, 2), T(4, 5)),
    op("select.neg_index", lambda x: x.select(1, -1), T(4, 5)),
    op("select.getitem", lambda x: x[:, 2, -1], T(3, 4, 5)),
    op("select.dynamic", lambda x: x[:, 0], T(n, 5)),
    op("narrow", lambda x: x.narrow(0, 1, 3), T(6, 4)),
    op("narrow.neg_start", lambda x: x.narrow(1, -3, 2), T(4, 6)),
    op("narrow.dynamic", lambda x: x.narrow(1, 1, 2), T(n, 6)),
    op("unbind", lambda x: x.unbind(1), T(3, 4)),
    # index_add / index_copy / index_fill, slice/select scatter
    op("index_add", lambda x, i, s: x.index_add(0, i, s), T(6, 4), I(8, high=6), T(8, 4), rtol=1e-5, atol=1e-5),
    op("index_add.alpha_dim1", lambda x, i, s: x.index_add(1, i, s, alpha=2.0), T(3, 6), I(4, high=6), T(3, 4), rtol=1e-5, atol=1e-5),
    op("index_copy", lambda x, i, s: x.index_copy(0, i, s), T(6, 4), T(3, dtype=i64, gen=unique_index(6)), T(3, 4)),
    op("index_fill", lambda x, i: x.index_fill(1, i, -2.0), T(3, 6), I(2, high=6)),
    op("slice_scatter", lambda x, s: torch.slice_scatter(x, s, 1, 1, 7, 2), T(3, 8), T(3, 3)),
    op("select_scatter", lambda x, s: torch.select_scatter(x, s, 0, -1), T(4, 5), T(5)),
    op("diagonal_scatter", lambda x, s: torch.diagonal_scatter(x, s, 1), T(4, 5), T(4)),
    op("one_hot", lambda i: F.one_hot(i, 6), I(4, 3, high=6)),
    op("one_hot.dynamic", lambda i: F.one_hot(i, 6), I(n, 3, high=6)),
    op("index_add.dynamic", lambda x, i, s: x.index_add(0, i, s), T(6, 4), I(k, high=6), T(k, 4), rtol=1e-5, atol=1e-5),
    op("index_copy.dynamic", lambda x, i, s: x.index_copy(0, i, s), T(n, 4), T(2, dtype=i64, gen=unique_index(3)), T(2, 4)),
    op("scatter_reduce.dyn_amax", lambda x, i, s: x.scatter_reduce(0, i, s, "amax"), T(4, 5), I(n, 5, high=4), T(n, 5)),
    op("select_scatter.dynamic", lambda x, s: torch.select_scatter(x, s, 1, 0), T(n, 5), T(n)),
]
