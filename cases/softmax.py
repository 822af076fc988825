"""softmax / log_softmax / softmin over every kind of dimension, with dtype
arguments, huge logits (a naive exp overflows) and -inf masks.
"""

import torch.nn.functional as F

from conformance import Dyn, T, op

from ._common import ACC, FLOATS, acc, dtypes, f16, f32, keep_diagonal

n = Dyn("n", 3, 6)
s = Dyn("s", 5, 12)
A = acc(f32)

CASES = [
    *dtypes("softmax", lambda x: F.softmax(x, -1), T(4, 16), dtypes=FLOATS, tol=ACC),
    op("softmax.dim0", lambda x: F.softmax(x, 0), T(4, 16), **A),
    op("softmax.dim_middle", lambda x: F.softmax(x, 1), T(2, 5, 3, 4), **A),
    op("softmax.dim_neg3", lambda x: F.softmax(x, -3), T(2, 5, 3, 4), **A),
    op("softmax.1d", lambda x: F.softmax(x, 0), T(32), **A),
    op("softmax.long_row", lambda x: F.softmax(x, -1), T(2, 4096), tags={"gated"}, **A),
    op("softmax.large_values", lambda x: F.softmax(x, -1), T(4, 16, low=-1000.0, high=1000.0), **A),
    op("softmax.neg_inf_mask", lambda x, m: F.softmax(x.masked_fill(~m, float("-inf")), -1), T(2, 8, 8), T(2, 8, 8, gen=keep_diagonal(0.5)), **A),
    op("softmax.f16_dtype_f32", lambda x: F.softmax(x, -1, dtype=f32), T(4, 16, dtype=f16), **A),
    op("softmax.f32_dtype_f16", lambda x: F.softmax(x, -1, dtype=f16), T(4, 16), **acc(f16)),
    op("softmax.tensor_method", lambda x: x.softmax(dim=2), T(2, 3, 16), **A),
    *dtypes("log_softmax", lambda x: F.log_softmax(x, -1), T(4, 16), dtypes=FLOATS, tol=ACC),
    op("log_softmax.dim0", lambda x: F.log_softmax(x, 0), T(4, 16), **A),
    op("log_softmax.dim_middle", lambda x: F.log_softmax(x, 1), T(2, 5, 3), **A),
    op("log_softmax.large_values", lambda x: F.log_softmax(x, -1), T(4, 16, low=-1000.0, high=1000.0), rtol=1e-4, atol=1e-2),
    op("log_softmax.f16_dtype_f32", lambda x: F.log_softmax(x, -1, dtype=f32), T(4, 16, dtype=f16), **A),
    op("softmin", lambda x: F.softmin(x, -1), T(4, 16), **A, ops=("aten.softmax",)),
    op("softmin.dim0", lambda x: F.softmin(x, 0), T(4, 16), **A, ops=("aten.softmax",)),
    op("softmax.temperature", lambda x: F.softmax(x / 0.1, -1), T(4, 16, low=-1.0, high=1.0), **A),
    op("softmax.dynamic", lambda x: F.softmax(x, -1), T(n, 16), **A),
    op("softmax.dyn_reduced", lambda x: F.softmax(x, -1), T(4, s), **A),
    op("softmax.dyn_both", lambda x: F.softmax(x, 1), T(n, s), **A),
    op("softmax.dyn_middle", lambda x: F.softmax(x, 1), T(2, s, n), **A),
    op("log_softmax.dynamic", lambda x: F.log_softmax(x, -1), T(n, s), **A),
    op("softmax.dynamic.f16", lambda x: F.softmax(x, -1), T(n, 16, dtype=f16), **acc(f16)),
]
