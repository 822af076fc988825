"""Convolutions: 1d/2d/3d with stride, padding (ints, 'same', 'valid'),
dilation, groups (incl. depthwise), no bias; transposed convolutions with
output_padding. Weights and bias are inputs; values in [-1, 1).
"""

import torch.nn.functional as F

from conformance import Dyn, op

from ._common import ACC, FLOATS, U, acc, dtypes, f16, f32

n = Dyn("n", 2, 3)
h = Dyn("h", 8, 11)
w = Dyn("w", 9, 12)
A = acc(f32)


CASES = [
    # conv1d
    *dtypes("conv1d", F.conv1d, U(2, 4, 16), U(6, 4, 3), U(6), dtypes=FLOATS, tol=ACC),
    op("conv1d.stride2", lambda x, w, b: F.conv1d(x, w, b, stride=2), U(2, 4, 16), U(6, 4, 3), U(6), **A),
    op("conv1d.padding", lambda x, w, b: F.conv1d(x, w, b, padding=2), U(2, 4, 16), U(6, 4, 5), U(6), **A),
    op("conv1d.padding_same", lambda x, w, b: F.conv1d(x, w, b, padding="same"), U(2, 4, 16), U(6, 4, 4), U(6), **A),
    op("conv1d.dilation", lambda x, w, b: F.conv1d(x, w, b, dilation=3), U(2, 4, 16), U(6, 4, 3), U(6), **A),
    op("conv1d.groups", lambda x, w, b: F.conv1d(x, w, b, groups=2), U(2, 4, 16), U(6, 2, 3), U(6), **A),
    op("conv1d.no_bias", F.conv1d, U(2, 4, 16), U(6, 4, 3), **A),
    op("conv1d.unbatched", F.conv1d, U(4, 16), U(6, 4, 3), U(6), **A),
    op("conv1d.dynamic", F.conv1d, U(n, 4, 16), U(6, 4, 3), U(6), **A),
    op("conv1d.dyn_length", lambda x, w, b: F.conv1d(x, w, b, padding=1), U(2, 4, h), U(6, 4, 3), U(6), **A),
    # conv2d
    *dtypes("conv2d", F.conv2d, U(2, 3, 10, 10), U(4, 3, 3, 3), U(4), dtypes=FLOATS, tol=ACC),
    op("conv2d.stride2", lambda x, w, b: F.conv2d(x, w, b, stride=2), U(1, 3, 9, 9), U(4, 3, 3, 3), U(4), **A),
    op("conv2d.stride_asymmetric", lambda x, w, b: F.conv2d(x, w, b, stride=(1, 2)), U(1, 3, 9, 9), U(4, 3, 3, 3), U(4), **A),
    op("conv2d.padding1", lambda x, w, b: F.conv2d(x, w, b, padding=1), U(2, 3, 8, 8), U(4, 3, 3, 3), U(4), **A),
    op("conv2d.padding_asymmetric", lambda x, w, b: F.conv2d(x, w, b, padding=(0, 2)), U(2, 3, 8, 8), U(4, 3, 3, 3), U(4), **A),
    op("conv2d.padding_same", lambda x, w, b: F.conv2d(x, w, b, padding="same"), U(2, 3, 8, 8), U(4, 3, 3, 3), U(4), **A),
    op("conv2d.padding_same_even", lambda x, w, b: F.conv2d(x, w, b, padding="same"), U(2, 3, 8, 8), U(4, 3, 4, 2), U(4), **A),
    op("conv2d.padding_valid", lambda x, w, b: F.conv2d(x, w, b, padding="valid"), U(2, 3, 8, 8), U(4, 3, 3, 3), U(4), **A),
    op("conv2d.dilation2", lambda x, w, b: F.conv2d(x, w, b, dilation=2), U(1, 3, 12, 12), U(4, 3, 3, 3), U(4), **A),
    op("conv2d.stride_pad_dilation", lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=2, dilation=2), U(1, 3, 13, 13), U(4, 3, 3, 3), U(4), **A),
    op("conv2d.groups2", lambda x, w, b: F.conv2d(x, w, b, groups=2), U(2, 4, 8, 8), U(6, 2, 3, 3), U(6), **A),
    op("conv2d.depthwise", lambda x, w, b: F.conv2d(x, w, b, padding=1, groups=8), U(2, 8, 8, 8), U(8, 1, 3, 3), U(8), **A),
    op("conv2d.depthwise_multiplier", lambda x, w: F.conv2d(x, w, groups=4), U(1, 4, 8, 8), U(8, 1, 3, 3), **A),
    op("conv2d.no_bias", F.conv2d, U(2, 3, 8, 8), U(4, 3, 3, 3), **A),
    op("conv2d.pointwise", F.conv2d, U(2, 16, 6, 6), U(8, 16, 1, 1), U(8), **A),
    op("conv2d.rect_kernel", F.conv2d, U(1, 3, 10, 12), U(4, 3, 1, 5), U(4), **A),
    op("conv2d.kernel_eq_input", F.conv2d, U(2, 3, 5, 5), U(4, 3, 5, 5), U(4), **A),
    op("conv2d.many_channels", lambda x, w, b: F.conv2d(x, w, b, padding=1), U(1, 64, 8, 8), U(32, 64, 3, 3), U(32), rtol=1e-4, atol=1e-3, tags={"gated"}),
    op("conv2d.unbatched", F.conv2d, U(3, 8, 8), U(4, 3, 3, 3), U(4), **A),
    op("conv2d.dynamic", lambda x, w, b: F.conv2d(x, w, b, padding=1), U(n, 3, 8, 8), U(4, 3, 3, 3), U(4), **A),
    op("conv2d.dyn_hw", lambda x, w, b: F.conv2d(x, w, b, padding=1), U(1, 3, h, w), U(4, 3, 3, 3), U(4), **A),
    # padding=2 keeps the output >= 2 wide at every size export must allow (>= 2)
    op("conv2d.dyn_stride2", lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=2), U(n, 3, h, h), U(4, 3, 3, 3), U(4), **A),
    # conv3d
    *dtypes("conv3d", F.conv3d, U(1, 2, 6, 6, 6), U(4, 2, 3, 3, 3), U(4), dtypes=(f32, f16), tol=ACC),
    op("conv3d.stride_padding", lambda x, w, b: F.conv3d(x, w, b, stride=2, padding=1), U(1, 2, 7, 7, 7), U(4, 2, 3, 3, 3), U(4), **A),
    op("conv3d.groups", lambda x, w, b: F.conv3d(x, w, b, groups=2), U(1, 4, 5, 5, 5), U(4, 2, 3, 3, 3), U(4), **A),
    op("conv3d.dilation", lambda x, w: F.conv3d(x, w, dilation=(1, 2, 2)), U(1, 2, 6, 8, 8), U(3, 2, 3, 3, 3), **A),
    op("conv3d.dynamic", F.conv3d, U(n, 2, 5, 5, 5), U(4, 2, 3, 3, 3), U(4), **A),
    # transposed convolutions (weight is (in, out / groups, *kernel))
    op("conv_transpose1d", F.conv_transpose1d, U(2, 4, 8), U(4, 6, 3), U(6), **A),
    op("conv_transpose1d.stride2_output_padding", lambda x, w, b: F.conv_transpose1d(x, w, b, stride=2, padding=1, output_padding=1), U(2, 4, 8), U(4, 6, 3), U(6), **A),
    *dtypes("conv_transpose2d", F.conv_transpose2d, U(2, 4, 6, 6), U(4, 3, 3, 3), U(3), dtypes=FLOATS, tol=ACC),
    op("conv_transpose2d.stride2", lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2), U(1, 4, 5, 5), U(4, 3, 3, 3), U(3), **A),
    op("conv_transpose2d.padding", lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1), U(1, 4, 5, 5), U(4, 3, 3, 3), U(3), **A),
    op("conv_transpose2d.output_padding", lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1), U(1, 4, 5, 5), U(4, 3, 3, 3), U(3), **A),
    op("conv_transpose2d.kernel2_stride2", lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2), U(2, 8, 4, 4), U(8, 4, 2, 2), U(4), **A),
    op("conv_transpose2d.groups", lambda x, w, b: F.conv_transpose2d(x, w, b, groups=2), U(1, 4, 5, 5), U(4, 3, 3, 3), U(6), **A),
    op("conv_transpose2d.dilation", lambda x, w, b: F.conv_transpose2d(x, w, b, dilation=2), U(1, 4, 5, 5), U(4, 3, 3, 3), U(3), **A),
    op("conv_transpose2d.no_bias", F.conv_transpose2d, U(1, 4, 5, 5), U(4, 3, 3, 3), **A),
    op("conv_transpose2d.dynamic", lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2), U(n, 4, 5, 5), U(4, 3, 3, 3), U(3), **A),
    op("conv_transpose2d.dyn_hw", lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1), U(1, 4, h, w), U(4, 3, 3, 3), U(3), **A),
    op("conv_transpose3d", lambda x, w, b: F.conv_transpose3d(x, w, b, stride=2), U(1, 2, 3, 3, 3), U(2, 4, 3, 3, 3), U(4), **A),
    op("conv_transpose3d.dynamic", F.conv_transpose3d, U(n, 2, 3, 3, 3), U(2, 4, 3, 3, 3), U(4), **A),
]
