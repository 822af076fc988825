"""Pooling: max (with and without indices), average (padding, ceil_mode,
count_include_pad, divisor_override), adaptive max/avg, lp, in 1d/2d/3d.

Max-pool inputs are distinct, so the returned indices are unambiguous.
Dynamic spatial sizes keep every pooled size >= 2 at any input size >= 2
(export must hold for all of them), hence the stride-1 windows there.
"""

import torch.nn.functional as F

from conformance import Dyn, T, op

from ._common import ACC, FLOATS, acc, bf16, distinct, dtypes, f16, f32

n = Dyn("n", 2, 3)
h = Dyn("h", 8, 11)
w = Dyn("w", 9, 12)
L = Dyn("l", 12, 17)
A = acc(f32)
D = distinct(0.01)

CASES = [
    # max_pool1d / 2d / 3d
    *dtypes("max_pool1d", lambda x: F.max_pool1d(x, 3), T(2, 4, 15), dtypes=FLOATS),
    op("max_pool1d.stride_padding", lambda x: F.max_pool1d(x, 3, stride=2, padding=1), T(2, 4, 16)),
    op("max_pool1d.dilation", lambda x: F.max_pool1d(x, 2, stride=1, dilation=2), T(2, 4, 16)),
    op("max_pool1d.ceil_mode", lambda x: F.max_pool1d(x, 3, stride=2, ceil_mode=True), T(2, 4, 16)),
    op("max_pool1d.indices", lambda x: F.max_pool1d(x, 2, return_indices=True), T(2, 4, 16, gen=D), ops=("aten.max_pool1d_with_indices",)),
    *dtypes("max_pool2d", lambda x: F.max_pool2d(x, 2), T(2, 3, 8, 8), dtypes=FLOATS),
    op("max_pool2d.kernel3_stride2", lambda x: F.max_pool2d(x, 3, stride=2), T(2, 3, 9, 9)),
    op("max_pool2d.padding", lambda x: F.max_pool2d(x, 3, stride=2, padding=1), T(2, 3, 8, 8)),
    op("max_pool2d.padding_negative_values", lambda x: F.max_pool2d(x, 3, stride=1, padding=1), T(1, 2, 6, 6, low=-9.0, high=-1.0)),
    op("max_pool2d.rect", lambda x: F.max_pool2d(x, (2, 3), stride=(1, 2)), T(1, 3, 8, 9)),
    op("max_pool2d.dilation", lambda x: F.max_pool2d(x, 2, stride=1, dilation=2), T(1, 3, 8, 8)),
    op("max_pool2d.ceil_mode", lambda x: F.max_pool2d(x, 3, stride=2, ceil_mode=True), T(1, 3, 8, 8)),
    op("max_pool2d.ceil_mode_padding", lambda x: F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True), T(1, 3, 10, 10)),
    op("max_pool2d.indices", lambda x: F.max_pool2d(x, 2, return_indices=True), T(2, 3, 8, 8, gen=D), ops=("aten.max_pool2d_with_indices",)),
    op("max_pool2d.indices_padding", lambda x: F.max_pool2d(x, 3, 2, 1, return_indices=True), T(1, 3, 9, 9, gen=D), ops=("aten.max_pool2d_with_indices",)),
    op("max_pool2d.unbatched", lambda x: F.max_pool2d(x, 2), T(3, 8, 8)),
    op("max_pool2d.neg_inf", lambda x: F.max_pool2d(x.masked_fill(x < 5, float("-inf")), 2), T(1, 2, 8, 8)),
    op("max_pool3d", lambda x: F.max_pool3d(x, 2), T(1, 2, 6, 6, 6)),
    op("max_pool3d.stride_padding", lambda x: F.max_pool3d(x, 3, stride=2, padding=1), T(1, 2, 7, 7, 7)),
    op("max_pool2d.dynamic", lambda x: F.max_pool2d(x, 2), T(n, 3, 8, 8)),
    op("max_pool2d.dyn_hw", lambda x: F.max_pool2d(x, 3, stride=1, padding=1), T(1, 3, h, w)),
    # (max_pool1d specialises a dynamic length under torch.export, so only its batch is dynamic)
    op("max_pool1d.dynamic", lambda x: F.max_pool1d(x, 3, stride=2), T(n, 4, 16)),
    # avg_pool1d / 2d / 3d
    *dtypes("avg_pool1d", lambda x: F.avg_pool1d(x, 3), T(2, 4, 15), dtypes=(f32, f16), tol=ACC),
    op("avg_pool1d.padding_exclude", lambda x: F.avg_pool1d(x, 3, stride=2, padding=1, count_include_pad=False), T(2, 4, 16), **A),
    *dtypes("avg_pool2d", lambda x: F.avg_pool2d(x, 2), T(2, 3, 8, 8), dtypes=FLOATS, tol=ACC),
    op("avg_pool2d.kernel3_stride2", lambda x: F.avg_pool2d(x, 3, stride=2), T(2, 3, 9, 9), **A),
    op("avg_pool2d.padding_include", lambda x: F.avg_pool2d(x, 3, stride=2, padding=1), T(1, 3, 8, 8), **A),
    op("avg_pool2d.padding_exclude", lambda x: F.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False), T(1, 3, 8, 8), **A),
    op("avg_pool2d.ceil_mode", lambda x: F.avg_pool2d(x, 3, stride=2, ceil_mode=True), T(1, 3, 8, 8), **A),
    op("avg_pool2d.ceil_mode_exclude", lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False), T(1, 3, 10, 10), **A),
    op("avg_pool2d.divisor_override", lambda x: F.avg_pool2d(x, 2, divisor_override=3), T(1, 3, 8, 8), **A),
    op("avg_pool2d.rect", lambda x: F.avg_pool2d(x, (1, 3), stride=(1, 3)), T(1, 3, 4, 9), **A),
    op("avg_pool3d", lambda x: F.avg_pool3d(x, 2), T(1, 2, 6, 6, 6), **A),
    op("avg_pool3d.padding_exclude", lambda x: F.avg_pool3d(x, 3, 2, 1, count_include_pad=False), T(1, 2, 7, 7, 7), **A),
    op("avg_pool2d.dynamic", lambda x: F.avg_pool2d(x, 2), T(n, 3, 8, 8), **A),
    op("avg_pool2d.dyn_hw", lambda x: F.avg_pool2d(x, 3, stride=1, padding=1, count_include_pad=False), T(1, 3, h, w), **A),
    op("avg_pool1d.dyn_length", lambda x: F.avg_pool1d(x, 3, stride=1, padding=1), T(2, 4, L), **A),
    # adaptive pooling: output size fixed, windows derived from the input size
    *dtypes("adaptive_avg_pool2d", lambda x: F.adaptive_avg_pool2d(x, 1), T(2, 8, 7, 7), dtypes=FLOATS, tol=ACC),
    op("adaptive_avg_pool2d.divisible", lambda x: F.adaptive_avg_pool2d(x, (4, 2)), T(2, 3, 8, 8), **A),
    op("adaptive_avg_pool2d.overlapping", lambda x: F.adaptive_avg_pool2d(x, (3, 5)), T(2, 3, 8, 7), **A),
    op("adaptive_avg_pool2d.upsample", lambda x: F.adaptive_avg_pool2d(x, (6, 6)), T(1, 3, 4, 4), **A),
    op("adaptive_avg_pool1d", lambda x: F.adaptive_avg_pool1d(x, 4), T(2, 3, 10), **A),
    op("adaptive_avg_pool3d", lambda x: F.adaptive_avg_pool3d(x, (2, 3, 2)), T(1, 2, 5, 6, 4), **A),
    op("adaptive_max_pool2d", lambda x: F.adaptive_max_pool2d(x, (3, 5)), T(2, 3, 8, 7)),
    op("adaptive_max_pool2d.indices", lambda x: F.adaptive_max_pool2d(x, 2, return_indices=True), T(2, 3, 8, 8, gen=D)),
    op("adaptive_max_pool1d", lambda x: F.adaptive_max_pool1d(x, 3), T(2, 3, 10)),
    op("adaptive_avg_pool2d.dynamic", lambda x: F.adaptive_avg_pool2d(x, 1), T(n, 8, 7, 7), **A),
    op("adaptive_avg_pool2d.dyn_hw", lambda x: F.adaptive_avg_pool2d(x, (2, 2)), T(1, 3, h, w), **A),
    op("adaptive_max_pool2d.dynamic", lambda x: F.adaptive_max_pool2d(x, 2), T(n, 3, 8, 8)),
    # lp pooling (avg pool of |x|^p, then the p-th root)
    op("lp_pool2d", lambda x: F.lp_pool2d(x, 2, 2), T(1, 3, 8, 8, low=0.1, high=4.0), **A, ops=("aten.avg_pool2d",)),
    op("lp_pool1d", lambda x: F.lp_pool1d(x, 3, 2), T(1, 3, 8, low=0.1, high=4.0), **A, ops=("aten.avg_pool1d",)),
    # bf16 average pooling keeps its own dtype
    op("avg_pool2d.bf16_padding", lambda x: F.avg_pool2d(x, 3, 1, 1), T(1, 3, 6, 6, dtype=bf16), **acc(bf16)),
]
