"""In-place ops: on inputs (which torch.export turns into input mutations),
on intermediates, and through views (a write to x[:, :2] must show in x).
Each case returns the mutated tensor; inputs are cloned for every run.
"""

import torch.nn.functional as F

from conformance import Dyn, T, op

from ._common import b8, f16, i32, i64, mask, nonzero, perm_rows, unique_index

n = Dyn("n", 3, 6)


def inplace(method, *args, **kw):
    """x.<method>_(*other_inputs, *args) and return x."""

    def fn(x, *others):
        getattr(x, method)(*others, *args, **kw)
        return x

    return fn


CASES = [
    # arithmetic on an input
    op("add_", inplace("add_"), T(3, 4), T(3, 4)),
    op("add_.alpha", inplace("add_", alpha=2.0), T(3, 4), T(3, 4)),
    op("add_.broadcast", inplace("add_"), T(3, 4), T(4)),
    op("add_.scalar", inplace("add_", 1.5), T(3, 4)),
    op("add_.i32", inplace("add_"), T(3, 4, dtype=i32), T(3, 4, dtype=i32)),
    op("add_.f32_from_i64", inplace("add_"), T(3, 4), T(3, 4, dtype=i64)),
    op("add_.f16", inplace("add_"), T(3, 4, dtype=f16), T(3, 4, dtype=f16)),
    op("sub_", inplace("sub_"), T(3, 4), T(3, 4)),
    op("mul_", inplace("mul_"), T(3, 4), T(3, 4)),
    op("mul_.scalar", inplace("mul_", 2), T(3, 4)),
    op("mul_.i64_scalar", inplace("mul_", 3), T(3, 4, dtype=i64)),
    op("div_", inplace("div_"), T(3, 4), T(3, 4, gen=nonzero())),
    op("div_.scalar", inplace("div_", 4.0), T(3, 4)),
    op("pow_", inplace("pow_", 2), T(3, 4)),
    op("addcmul_", inplace("addcmul_", value=0.5), T(3, 4), T(3, 4), T(3, 4)),
    op("lerp_", inplace("lerp_", 0.25), T(3, 4), T(3, 4)),
    # unary in place
    op("relu_", inplace("relu_"), T(3, 4)),
    op("relu_.functional", lambda x: F.relu(x, inplace=True), T(3, 4), ops=("aten.relu_",)),
    op("leaky_relu_.functional", lambda x: F.leaky_relu(x, 0.1, inplace=True), T(3, 4), ops=("aten.leaky_relu_",)),
    op("relu6_.functional", lambda x: F.relu6(x, inplace=True), T(3, 4)),
    op("sigmoid_", inplace("sigmoid_"), T(3, 4)),
    op("exp_", inplace("exp_"), T(3, 4, low=-4.0, high=4.0)),
    op("neg_", inplace("neg_"), T(3, 4, dtype=i32)),
    op("abs_", inplace("abs_"), T(3, 4)),
    op("floor_", inplace("floor_"), T(3, 4)),
    op("clamp_", inplace("clamp_", -1.0, 1.0), T(3, 4)),
    op("clamp_min_", inplace("clamp_min_", 0.0), T(3, 4)),
    op("tanh_", inplace("tanh_"), T(3, 4)),
    # filling and copying
    op("fill_", inplace("fill_", 3.0), T(3, 4)),
    op("fill_.tensor", inplace("fill_"), T(3, 4), T()),
    op("zero_", inplace("zero_"), T(3, 4)),
    op("copy_", inplace("copy_"), T(3, 4), T(3, 4)),
    op("copy_.broadcast_cast", inplace("copy_"), T(3, 4), T(4, dtype=i64)),
    op("masked_fill_", inplace("masked_fill_", -1.0), T(3, 4), T(3, 4, dtype=b8, gen=mask())),
    op("index_put_", lambda x, i, v: x.index_put_((i,), v), T(6, 4), T(3, dtype=i64, gen=unique_index(6)), T(3, 4)),
    op("index_put_.accumulate", lambda x, i, v: x.index_put_((i,), v, accumulate=True), T(6, 4), T(8, dtype=i64, low=0, high=6), T(8, 4), rtol=1e-5, atol=1e-5),
    op("scatter_", lambda x, i, s: x.scatter_(1, i, s), T(3, 6), T(3, 2, dtype=i64, gen=perm_rows(6)), T(3, 2)),
    op("scatter_add_", lambda x, i, s: x.scatter_add_(0, i, s), T(4, 5), T(6, 5, dtype=i64, low=0, high=4), T(6, 5), rtol=1e-5, atol=1e-5),
    op("index_add_", lambda x, i, s: x.index_add_(0, i, s), T(5, 3), T(7, dtype=i64, low=0, high=5), T(7, 3), rtol=1e-5, atol=1e-5),
    # assignment through indexing (setitem)
    op("copy_.slice_assign", lambda x, y: x.__setitem__(slice(1, 3), y) or x, T(4, 5), T(2, 5), ops=("aten.copy_",)),
    op("fill_.column_assign", lambda x: x.__setitem__((slice(None), 0), 0.0) or x, T(4, 5), ops=("aten.fill_",)),
    op("copy_.strided_assign", lambda x, y: x.__setitem__((slice(None), slice(None, None, 2)), y) or x, T(4, 6), T(4, 3), ops=("aten.copy_",)),
    op("index_put_.mask_assign", lambda x: x.__setitem__(x < 0, 0.0) or x, T(4, 5), ops=("aten.index_put_",)),
    op("index_put_.tensor_index_assign", lambda x, i, v: x.__setitem__(i, v) or x, T(6, 4), T(2, dtype=i64, gen=unique_index(6)), T(2, 4), ops=("aten.index_put_",)),
    # through views: the base tensor must see the write
    op("mul_.on_view", lambda x: (x[:, :2].mul_(2), x)[1], T(3, 4), ops=("aten.mul_",)),
    op("add_.on_transposed_view", lambda x, y: (x.t().add_(y), x)[1], T(3, 4), T(4, 3), ops=("aten.add_",)),
    op("zero_.on_diagonal", lambda x: (x.diagonal().zero_(), x)[1], T(4, 4), ops=("aten.zero_",)),
    op("relu_.on_select", lambda x: (x[1].relu_(), x)[1], T(3, 4), ops=("aten.relu_",)),
    # on intermediates, and chains
    op("tanh_.intermediate", lambda x: (x * 2).tanh_(), T(3, 4), ops=("aten.tanh_",)),
    op("add_.chain", lambda x, y: x.mul_(2).add_(y).relu_(), T(3, 4), T(3, 4), ops=("aten.mul_", "aten.add_", "aten.relu_")),
    op("add_.return_both", lambda x, y: (x.add_(y), y * 2), T(3, 4), T(3, 4)),
    op("add_.self_aliasing", lambda x: x.add_(x), T(3, 4)),
    # dynamic
    op("add_.dynamic", inplace("add_"), T(n, 4), T(n, 4)),
    op("mul_.dyn_scalar", inplace("mul_", 2.0), T(n, n)),
    op("relu_.dynamic", inplace("relu_"), T(n, 4)),
    op("copy_.dyn_slice_assign", lambda x, y: x.__setitem__((slice(None), slice(0, 2)), y) or x, T(n, 4), T(n, 2), ops=("aten.copy_",)),
    op("masked_fill_.dynamic", inplace("masked_fill_", 0.0), T(n, 4), T(n, 4, dtype=b8, gen=mask())),
    op("sub_.dynamic", inplace("sub_"), T(n, 4), T(4)),
    op("div_.dynamic", inplace("div_"), T(n, 4), T(n, 4, gen=nonzero())),
    op("clamp_.dynamic", inplace("clamp_", -1.0, 1.0), T(n, 4)),
    op("fill_.dynamic", inplace("fill_", 3.0), T(n, 4)),
    op("copy_.dynamic", inplace("copy_"), T(n, 4), T(n, 4)),
    op("index_put_.dyn_accumulate", lambda x, i, v: x.index_put_((i,), v, accumulate=True), T(n, 4), T(5, dtype=i64, low=0, high=3), T(5, 4), rtol=1e-5, atol=1e-5),
    op("mul_.dyn_on_view", lambda x: (x[:, :2].mul_(2), x)[1], T(n, 4), ops=("aten.mul_",)),
]
