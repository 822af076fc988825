"""Tensor creation inside the graph: *_like, full/zeros/ones, arange,
linspace, eye, constants captured from Python, and sizes taken from an
input's (possibly dynamic) shape.
"""

import torch

from conformance import Dyn, T, op

from ._common import b8, f16, f32, i32, i64

n = Dyn("n", 3, 6)
m = Dyn("m", 2, 5)

CASES = [
    op("zeros_like", torch.zeros_like, T(3, 4)),
    op("ones_like", lambda x: torch.ones_like(x, dtype=i32), T(3, 4)),
    op("full_like", lambda x: torch.full_like(x, 2.5), T(3, 4, dtype=f16)),
    op("full_like.bool", lambda x: torch.full_like(x, True), T(3, 4, dtype=b8)),
    op("zeros", lambda x: x + torch.zeros(3, 4), T(3, 4), ops=("aten.zeros",)),
    op("ones.i64", lambda x: torch.ones(2, 3, dtype=i64) * x, T(2, 3, dtype=i64), ops=("aten.ones",)),
    op("full", lambda x: torch.full((3, 4), -1.5) * x, T(3, 4)),
    op("full.int", lambda x: torch.full((4,), 7, dtype=i32) + x, T(4, dtype=i32), ops=("aten.full",)),
    op("new_zeros", lambda x: x.new_zeros(2, 5), T(3, 4, dtype=f16)),
    op("new_ones", lambda x: x.new_ones((3,)), T(3, 4, dtype=i64)),
    op("new_full", lambda x: x.new_full((2, 2), 4), T(3, dtype=i32)),
    op("arange", lambda x: x + torch.arange(4), T(3, 4), ops=("aten.arange",)),
    op("arange.start_step", lambda x: x * torch.arange(1, 13, 3), T(2, 4, dtype=i64), ops=("aten.arange",)),
    op("arange.float_step", lambda x: x + torch.arange(0.0, 1.0, 0.125), T(8), ops=("aten.arange",)),
    op("arange.negative_step", lambda x: x + torch.arange(5, -5, -2), T(5, dtype=i32), ops=("aten.arange",)),
    op("linspace", lambda x: x + torch.linspace(-1.0, 1.0, 7), T(2, 7), ops=("aten.linspace",)),
    op("eye", lambda x: x @ torch.eye(4), T(3, 4), ops=("aten.eye",), rtol=1e-6, atol=1e-6),
    op("eye.rect", lambda x: torch.eye(3, 5) + x, T(3, 5), ops=("aten.eye",)),
    op("tensor.constant", lambda x: x * torch.tensor([1.0, -2.0, 3.0, 0.5]), T(3, 4), ops=("aten.mul",)),
    op("tensor.constant_0d", lambda x: torch.where(x > 0, x, torch.tensor(-1.0)), T(3, 4), ops=("aten.where",)),
    op("tril_indices", lambda x: x[tuple(torch.tril_indices(4, 4))], T(4, 4), ops=("aten.tril_indices",)),
    # sizes from an input's dynamic shape
    op("zeros_like.dynamic", torch.zeros_like, T(n, 4)),
    op("full_like.dynamic", lambda x: torch.full_like(x, 3.0), T(n, m)),
    op("new_zeros.dynamic", lambda x: x.new_zeros(x.shape[0], 2), T(n, 4)),
    op("ones.dynamic", lambda x: torch.ones(x.shape[0], x.shape[1] + 1), T(n, m), ops=("aten.ones",)),
    op("arange.dynamic", lambda x: torch.arange(x.shape[0]) * 2, T(n, 4), ops=("aten.arange",)),
    op("arange.dyn_positions", lambda x: x + torch.arange(x.shape[1], dtype=f32), T(3, n), ops=("aten.arange",)),
    op("eye.dynamic", lambda x: torch.eye(x.shape[0]) + x, T(n, n), ops=("aten.eye",)),
]
