"""Activation functions, each with its parameters and in the dtypes models use.

Inputs span [-9, 9) (f16/bf16 [-4, 4)) so both sides of every kink and the
saturating tails are exercised; `*.large` cases push into the regions where
a naive formula overflows (softplus, silu, mish, logsigmoid of |x| ~ 80).
"""

import torch
import torch.nn.functional as F

from conformance import Dyn, T, op

from ._common import FLOATS, bf16, dtypes, f16, f32, f64, i32, i64

n = Dyn("n", 3, 6)
m = Dyn("m", 4, 9)
BIG = dict(low=-90.0, high=90.0)

CASES = [
    # rectifiers
    *dtypes("relu", torch.relu, T(4, 8), dtypes=(*FLOATS, i32, i64)),
    *dtypes("relu6", F.relu6, T(4, 8), dtypes=FLOATS),
    *dtypes("leaky_relu", F.leaky_relu, T(4, 8), dtypes=FLOATS),
    op("leaky_relu.slope", lambda x: F.leaky_relu(x, 0.2), T(4, 8)),
    op("leaky_relu.negative_slope_gt1", lambda x: F.leaky_relu(x, 1.5), T(4, 8), ops=("aten.leaky_relu",)),
    op("prelu", F.prelu, T(2, 3, 4, 4), T(3, low=0.0, high=0.5)),
    op("prelu.shared", F.prelu, T(2, 3, 4, 4), T(1, low=0.0, high=0.5)),
    op("rrelu.eval", lambda x: F.rrelu(x, 0.1, 0.3, training=False), T(4, 8), ops=("aten.rrelu",)),
    *dtypes("hardtanh", F.hardtanh, T(4, 8), dtypes=(f32, f16)),
    op("hardtanh.bounds", lambda x: F.hardtanh(x, -2.0, 3.0), T(4, 8)),
    op("threshold", lambda x: F.threshold(x, 1.0, -5.0), T(4, 8)),
    # exponential linear units
    *dtypes("elu", F.elu, T(4, 8), dtypes=FLOATS),
    op("elu.alpha", lambda x: F.elu(x, alpha=0.5), T(4, 8)),
    op("selu", F.selu, T(4, 8), ops=("aten.selu",)),
    op("celu", lambda x: F.celu(x, alpha=2.0), T(4, 8)),
    # gelu, both forms
    *dtypes("gelu", F.gelu, T(4, 8), dtypes=(*FLOATS, f64)),
    *dtypes("gelu.tanh", lambda x: F.gelu(x, approximate="tanh"), T(4, 8), dtypes=FLOATS, ops=("aten.gelu",)),
    # smooth gates
    *dtypes("silu", F.silu, T(4, 8), dtypes=FLOATS),
    op("silu.large", F.silu, T(4, 8, **BIG), ops=("aten.silu",)),
    *dtypes("mish", F.mish, T(4, 8), dtypes=FLOATS),
    op("mish.large", F.mish, T(4, 8, **BIG), ops=("aten.mish",)),
    *dtypes("sigmoid", torch.sigmoid, T(4, 8), dtypes=(*FLOATS, f64)),
    op("sigmoid.large", torch.sigmoid, T(4, 8, **BIG), ops=("aten.sigmoid",)),
    op("sigmoid.i32", torch.sigmoid, T(4, 8, dtype=i32)),
    op("tanh.f16", torch.tanh, T(4, 8, dtype=f16)),
    op("tanh.bf16", torch.tanh, T(4, 8, dtype=bf16)),
    op("tanh.large", torch.tanh, T(4, 8, **BIG)),
    *dtypes("hardswish", F.hardswish, T(4, 8), dtypes=FLOATS),
    *dtypes("hardsigmoid", F.hardsigmoid, T(4, 8), dtypes=(f32, f16)),
    op("logsigmoid", F.logsigmoid, T(4, 8), ops=("aten.log_sigmoid",)),
    op("logsigmoid.large", F.logsigmoid, T(4, 8, **BIG), ops=("aten.log_sigmoid",)),
    op("softsign", F.softsign, T(4, 8), ops=("aten.abs", "aten.div")),
    op("tanhshrink", F.tanhshrink, T(4, 8), ops=("aten.tanh", "aten.sub")),
    # softplus
    *dtypes("softplus", F.softplus, T(4, 8), dtypes=(f32, f16)),
    op("softplus.beta_threshold", lambda x: F.softplus(x, beta=2.0, threshold=5.0), T(4, 8)),
    op("softplus.large", F.softplus, T(4, 8, **BIG)),
    # shrinkage
    op("softshrink", lambda x: F.softshrink(x, 1.5), T(4, 8)),
    op("hardshrink", lambda x: F.hardshrink(x, 1.5), T(4, 8)),
    # gated linear unit (halves a dimension)
    op("glu", F.glu, T(4, 8)),
    op("glu.dim0", lambda x: F.glu(x, 0), T(6, 5)),
    # dynamic shapes
    op("relu.dynamic", torch.relu, T(n, 8)),
    op("relu.dyn_2d", torch.relu, T(n, m)),
    op("leaky_relu.dynamic", lambda x: F.leaky_relu(x, 0.2), T(n, 8)),
    op("gelu.dynamic", F.gelu, T(n, m)),
    op("gelu.dyn_tanh", lambda x: F.gelu(x, approximate="tanh"), T(2, n, 8), ops=("aten.gelu",)),
    op("silu.dynamic", F.silu, T(n, 8)),
    # Found by `conformance fuzz --backend tosa` (8 ops, reduced by hand): one dynamic value read by silu and by
    # another op. With two dynamic dims iree-compile cannot order the dispatches ("failed to schedule execution
    # partitions"); read by sigmoid as well as silu's own formula, the run cannot map a transient buffer.
    op("silu.dyn_shared_operand", lambda x: (F.silu(-x), torch.exp(-x)), T(n, m), ops=("aten.silu", "aten.exp")),
    op("silu.dyn_beside_sigmoid", lambda x: (-x * torch.sigmoid(-x), torch.sigmoid(-x)), T(n, 8), ops=("aten.sigmoid", "aten.mul")),
    op("sigmoid.dynamic", torch.sigmoid, T(n, m)),
    op("tanh.dynamic", torch.tanh, T(n, 8)),
    op("hardswish.dynamic", F.hardswish, T(n, 8)),
    op("softplus.dynamic", F.softplus, T(n, 8)),
    op("elu.dynamic", F.elu, T(n, 8)),
    op("mish.dynamic", F.mish, T(n, 8)),
    op("glu.dynamic", F.glu, T(n, 8)),
    op("prelu.dynamic", F.prelu, T(n, 3, 4, 4), T(3, low=0.0, high=0.5)),
]
