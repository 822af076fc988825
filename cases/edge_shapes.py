"""Degenerate shapes: empty tensors (a zero-sized dimension), 0-d tensors,
and size-1 dimensions that broadcast. Reductions over nothing have defined
results (sum 0, prod 1, any False, all True, mean nan), and a matmul with
K = 0 is all zeros.
"""

import torch
import torch.nn.functional as F

from conformance import T, op

from ._common import b8, f16, i32, i64

CASES = [
    # empty tensors through elementwise and shape ops
    op("add.empty", torch.add, T(0, 4), T(0, 4)),
    op("add.empty_broadcast", torch.add, T(0, 4), T(4)),
    op("relu.empty", torch.relu, T(0, 4)),
    op("exp.empty.f16", torch.exp, T(3, 0, dtype=f16)),
    op("mul.empty.i32", torch.mul, T(2, 0, 3, dtype=i32), T(2, 0, 3, dtype=i32)),
    op("where.empty", torch.where, T(0, 3, dtype=b8), T(0, 3), T(0, 3)),
    op("to.empty_f32_to_i64", lambda x: x.to(i64), T(0, 5)),
    op("reshape.empty", lambda x: x.reshape(4, 0, 2), T(0, 8)),
    op("t.empty", lambda x: x.t(), T(4, 0)),
    op("cat.empties", lambda x, y: torch.cat([x, y], 1), T(3, 0), T(3, 0)),
    op("stack.empty", lambda x, y: torch.stack([x, y]), T(0, 2), T(0, 2)),
    op("index_select.empty_index", lambda x, i: x.index_select(0, i), T(5, 3), T(0, dtype=i64)),
    op("slice.empty_result", lambda x: x[:, 3:3], T(4, 5)),
    op("pad.empty_batch", lambda x: F.pad(x, (1, 1)), T(0, 3, 4)),
    op("expand.empty", lambda x: x.expand(0, 4), T(1, 4)),
    # reductions over nothing
    op("sum.empty", torch.sum, T(0, 4)),
    op("sum.empty_dim", lambda x: x.sum(0), T(0, 4)),
    op("sum.empty_keep_nonreduced", lambda x: x.sum(1), T(0, 4)),
    op("prod.empty", torch.prod, T(0, 3)),
    op("mean.empty", torch.mean, T(0, 4)),
    op("any.empty", torch.any, T(0, 3, dtype=b8)),
    op("all.empty", torch.all, T(0, 3, dtype=b8)),
    op("amax.empty_batch", lambda x: x.amax(1), T(0, 4)),
    op("cumsum.empty", lambda x: x.cumsum(0), T(0, 4)),
    op("sort.empty", lambda x: torch.sort(x, 1), T(0, 4)),
    op("softmax.empty_batch", lambda x: F.softmax(x, -1), T(0, 8)),
    op("layer_norm.empty_batch", lambda x: F.layer_norm(x, (8,)), T(0, 8)),
    # contractions with a zero-sized dimension
    op("matmul.empty_m", torch.matmul, T(0, 4), T(4, 3)),
    op("matmul.empty_k", torch.matmul, T(3, 0), T(0, 4)),
    op("linear.empty_batch", F.linear, T(0, 8), T(4, 8), T(4)),
    op("bmm.empty_batch", torch.bmm, T(0, 3, 4), T(0, 4, 2)),
    op("conv2d.empty_batch", F.conv2d, T(0, 3, 6, 6), T(4, 3, 3, 3)),
    op("embedding.empty_index", F.embedding, T(0, dtype=i64), T(10, 4)),
    # 0-d tensors
    op("add.0d", torch.add, T(), T()),
    op("add.0d_and_1d", torch.add, T(), T(5)),
    op("mul.0d_i64_f32", torch.mul, T(dtype=i64), T()),
    op("exp.0d", torch.exp, T(low=-4.0, high=4.0)),
    op("neg.0d.i32", torch.neg, T(dtype=i32)),
    op("where.0d", torch.where, T(dtype=b8), T(), T()),
    op("clamp.0d", lambda x: torch.clamp(x, -1.0, 1.0), T()),
    op("gt.0d", torch.gt, T(), T()),
    op("to.0d_f32_to_i32", lambda x: x.to(i32), T()),
    op("sum.0d_dim", lambda x: x.sum(0), T()),
    # Found by `conformance fuzz --seed 0` on tosa: an int32 0-d sum (its result int64) lowered to a
    # tosa.identity that changes the element type.
    op("sum.0d_dim_int32_keepdim", lambda x: x.sum(0, keepdim=True), T(dtype=torch.int32)),
    op("amax.0d_dim", lambda x: x.amax(0), T()),
    # Found by `conformance fuzz --backend stablehlo --seed 1`: torch-mlir's stablehlo lowering dies of SIGSEGV on it.
    op("sum.0d_dim_keepdim", lambda x: x.sum(0, keepdim=True), T()),
    op("sum.0d_dim_keepdim.i32", lambda x: x.sum(0, keepdim=True), T(dtype=i32, low=-4, high=5)),
    op("unsqueeze.0d", lambda x: x.unsqueeze(0), T()),
    op("reshape.0d_to_1d", lambda x: x.reshape(1), T()),
    op("reshape.1elem_to_0d", lambda x: x.reshape(()), T(1, 1)),
    op("expand.0d", lambda x: x.expand(3, 4), T()),
    op("stack.0d", lambda x, y: torch.stack([x, y]), T(), T()),
    op("matmul.vec_vec_0d_result", torch.matmul, T(6), T(6), rtol=1e-5, atol=1e-4),
    op("select.to_0d", lambda x: x[2], T(5)),
    op("index_put.0d_value", lambda x, i, v: torch.index_put(x, (i,), v), T(5), T(1, dtype=i64, low=0, high=5), T()),
    op("softmax.0d", lambda x: F.softmax(x, 0), T()),
    # size-1 dimensions
    op("add.size1_both", torch.add, T(1, 4), T(3, 1)),
    op("sum.size1_dim", lambda x: x.sum(1), T(4, 1)),
    op("matmul.size1_dims", torch.matmul, T(1, 5), T(5, 1), rtol=1e-5, atol=1e-4),
    op("softmax.size1_dim", lambda x: F.softmax(x, -1), T(4, 1)),
    op("squeeze.all_ones", lambda x: x.squeeze(), T(1, 1, 1)),
    op("conv2d.1x1_image", F.conv2d, T(2, 3, 1, 1), T(4, 3, 1, 1)),
]
