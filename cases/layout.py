"""Non-contiguous data: ops applied to transposed, permuted, strided,
expanded (stride 0), overlapping (unfold/as_strided) and channels-last
views, and inputs whose own storage is transposed or strided. A compiler
that assumes dense row-major operands gets these wrong.
"""

import torch
import torch.nn.functional as F

from conformance import Dyn, T, op

from ._common import U, acc, f16, f32, i32, strided, transposed

n = Dyn("n", 3, 6)
A = acc(f32)


CASES = [
    # elementwise on views
    op("tanh.on_transpose", lambda x: torch.tanh(x.t()), T(3, 5), ops=("aten.tanh",)),
    op("add.transposed_plus_contiguous", lambda x, y: x.t() + y, T(3, 5), T(5, 3), ops=("aten.add",)),
    op("mul.strided_slice", lambda x: x[:, ::2] * 2, T(4, 9), ops=("aten.mul",)),
    op("exp.on_permute", lambda x: torch.exp(x.permute(2, 0, 1)), T(2, 3, 4, low=-2.0, high=2.0), ops=("aten.exp",)),
    op("add.expanded_operands", lambda x, y: x.expand(4, 5) + y.expand(4, 5), T(4, 1), T(1, 5), ops=("aten.add",)),
    op("sub.negative_offset_view", lambda x: x[1:, 1:] - x[:-1, :-1], T(5, 6), ops=("aten.sub",)),
    op("where.on_views", lambda c, x: torch.where(c.t(), x[::2], x[1::2]), T(4, 3, dtype=torch.bool), T(6, 4), ops=("aten.where",)),
    op("abs.on_diagonal_view", lambda x: torch.abs(x.diagonal()), T(5, 5), ops=("aten.abs",)),
    op("relu.dyn_transpose", lambda x: torch.relu(x.t()), T(n, 4), ops=("aten.relu",)),
    op("mul.dyn_strided", lambda x: x[:, 1::2] * x[:, ::2], T(n, 8), ops=("aten.mul",)),
    # reductions and normalisations over views
    op("sum.on_transpose", lambda x: x.t().sum(1), T(8, 16), ops=("aten.sum",), **A),
    op("amax.on_permute", lambda x: x.permute(2, 1, 0).amax(-1), T(4, 5, 6), ops=("aten.amax",)),
    op("softmax.on_transpose", lambda x: F.softmax(x.transpose(0, 1), -1), T(8, 4), ops=("aten.softmax",), **A),
    op("layer_norm.on_permute", lambda x: F.layer_norm(x.permute(0, 2, 1), (8,)), T(2, 8, 5), ops=("aten.layer_norm",), **A),
    op("cumsum.on_strided", lambda x: x[:, ::3].cumsum(1), T(3, 12), ops=("aten.cumsum",), **A),
    op("sum.dyn_on_permute", lambda x: x.permute(1, 0).sum(-1), T(n, 8), ops=("aten.sum",), **A),
    # contractions with transposed operands
    op("matmul.transposed_rhs", lambda a, b: a @ b.t(), U(8, 16), U(4, 16), ops=("aten.matmul",), **A),
    op("matmul.transposed_both", lambda a, b: a.t() @ b.t(), U(16, 8), U(4, 16), ops=("aten.matmul",), **A),
    op("matmul.mt_batched", lambda a, b: a @ b.mT, U(2, 8, 16), U(2, 4, 16), ops=("aten.matmul",), **A),
    op("bmm.on_permute", lambda a, b: torch.bmm(a.permute(1, 0, 2), b), U(8, 2, 16), U(2, 16, 4), ops=("aten.bmm",), **A),
    op("linear.on_strided", lambda x, w: F.linear(x[:, ::2], w), U(4, 32), U(8, 16), ops=("aten.linear",), **A),
    op("matmul.dyn_transposed", lambda a, b: a.t() @ b, U(n, 8), U(n, 4), ops=("aten.matmul",), **A),
    # convolution with channels-last and sliced input
    op("conv2d.channels_last", lambda x, w: F.conv2d(x.contiguous(memory_format=torch.channels_last), w, padding=1), U(2, 3, 8, 8), U(4, 3, 3, 3), ops=("aten.conv2d",), **A),
    op("conv2d.on_strided", lambda x, w: F.conv2d(x[..., ::2], w), U(1, 3, 8, 16), U(4, 3, 3, 3), ops=("aten.conv2d",), **A),
    op("max_pool2d.on_permute", lambda x: F.max_pool2d(x.permute(0, 3, 1, 2), 2), T(1, 8, 8, 3), ops=("aten.max_pool2d",)),
    # overlapping and stride-0 views
    op("unfold.sum", lambda x: x.unfold(1, 4, 2).sum(-1), T(3, 10), ops=("aten.unfold",), **A),
    op("unfold.2d", lambda x: x.unfold(0, 2, 1).unfold(1, 3, 2), T(5, 7), ops=("aten.unfold",)),
    op("as_strided", lambda x: torch.as_strided(x, (3, 3), (4, 1), 1), T(4, 4)),
    op("as_strided.overlapping", lambda x: torch.as_strided(x, (4, 3), (2, 1)) * 1.0, T(12), ops=("aten.as_strided",)),
    op("expand.then_reduce", lambda x: x.expand(3, 4, 5).sum(0), T(4, 5), ops=("aten.expand", "aten.sum"), **A),
    # view of a non-contiguous tensor must copy
    op("reshape.of_transpose", lambda x: x.t().reshape(-1), T(3, 4), ops=("aten.reshape",)),
    op("flatten.of_permute", lambda x: x.permute(1, 2, 0).flatten(), T(2, 3, 4), ops=("aten.flatten",)),
    op("reshape.dyn_of_transpose", lambda x: x.transpose(0, 1).reshape(4, -1), T(n, 4), ops=("aten.reshape",)),
    op("softmax.dyn_on_transpose", lambda x: F.softmax(x.t(), -1), T(n, 4), ops=("aten.softmax",), **A),
    op("add.dyn_transposed_input", torch.add, T(n, 6, gen=transposed()), T(n, 6), ops=("aten.add",)),
    op("bmm.dyn_on_permute", lambda a, b: torch.bmm(a.permute(1, 0, 2), b), U(n, 2, 16), U(2, 16, 4), ops=("aten.bmm",), **A),
    # inputs that are themselves non-contiguous
    op("add.transposed_input", torch.add, T(4, 6, gen=transposed()), T(4, 6), ops=("aten.add",)),
    op("matmul.transposed_input", torch.matmul, T(8, 16, gen=transposed(-1.0, 1.0)), U(16, 4), ops=("aten.matmul",), **A),
    op("sum.strided_input", lambda x: x.sum(-1), T(4, 8, gen=strided(2)), ops=("aten.sum",), **A),
    op("gelu.strided_input.f16", F.gelu, T(4, 8, dtype=f16, gen=strided(3, -4.0, 4.0)), ops=("aten.gelu",)),
    op("cumsum.transposed_input.i32", lambda x: x.cumsum(1), T(4, 6, dtype=i32, gen=transposed()), ops=("aten.cumsum",)),
]
