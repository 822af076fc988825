"""Normalisations: batch_norm (inference with given running stats, and
batch statistics), layer_norm, group_norm, instance_norm, rms_norm,
F.normalize and local_response_norm. Parameters are inputs; running
variances and norms' weights are positive where that matters.
"""

import torch.nn.functional as F

from conformance import Dyn, T, op

from ._common import ACC, FLOATS, acc, dtypes, f16, f32

n = Dyn("n", 2, 5)
s = Dyn("s", 3, 7)
h = Dyn("h", 4, 6)
A = acc(f32)
VAR = dict(low=0.5, high=2.0)  # running variance
W = dict(low=0.5, high=1.5)  # scale


def bn_eval(x, mean, var, weight, bias):
    return F.batch_norm(x, mean, var, weight, bias, training=False, eps=1e-5)


CASES = [
    # batch_norm, inference form: running statistics are inputs
    *dtypes("batch_norm", bn_eval, T(2, 4, 5, 5), T(4), T(4, **VAR), T(4, **W), T(4), dtypes=FLOATS, tol=ACC),
    op("batch_norm.1d", bn_eval, T(8, 4), T(4), T(4, **VAR), T(4, **W), T(4), **A),
    op("batch_norm.1d_seq", bn_eval, T(2, 4, 10), T(4), T(4, **VAR), T(4, **W), T(4), **A),
    op("batch_norm.3d", bn_eval, T(2, 3, 4, 4, 4), T(3), T(3, **VAR), T(3, **W), T(3), **A),
    op("batch_norm.no_affine", lambda x, m, v: F.batch_norm(x, m, v, training=False), T(2, 4, 5, 5), T(4), T(4, **VAR), **A),
    op("batch_norm.eps", lambda x, m, v, w, b: F.batch_norm(x, m, v, w, b, eps=1e-2), T(2, 4, 5, 5), T(4), T(4, low=0.001, high=0.01), T(4, **W), T(4), **A),
    # ... and with batch statistics (training mode, no running stats to update)
    op("batch_norm.batch_stats", lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), T(4, 3, 5, 5), T(3, **W), T(3), **A),
    op("batch_norm.batch_stats_update", lambda x, m, v: (F.batch_norm(x, m, v, training=True, momentum=0.1), m, v), T(4, 3, 5, 5), T(3), T(3, **VAR), **A),
    op("batch_norm.dynamic", bn_eval, T(n, 4, 5, 5), T(4), T(4, **VAR), T(4, **W), T(4), **A),
    op("batch_norm.dyn_hw", bn_eval, T(2, 4, h, h), T(4), T(4, **VAR), T(4, **W), T(4), **A),
    op("batch_norm.dyn_batch_stats", lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), T(n, 3, 5, 5), T(3, **W), T(3), **A),
    # layer_norm
    *dtypes("layer_norm", lambda x, w, b: F.layer_norm(x, (32,), w, b), T(4, 8, 32), T(32, **W), T(32), dtypes=FLOATS, tol=ACC),
    op("layer_norm.no_affine", lambda x: F.layer_norm(x, (32,)), T(4, 32), **A),
    op("layer_norm.weight_only", lambda x, w: F.layer_norm(x, (32,), w), T(4, 32), T(32, **W), **A),
    op("layer_norm.last_two", lambda x, w, b: F.layer_norm(x, (8, 16), w, b), T(2, 8, 16), T(8, 16, **W), T(8, 16), tags={"gated"}, **A),
    op("layer_norm.eps", lambda x: F.layer_norm(x, (16,), eps=1e-1), T(4, 16, low=-0.5, high=0.5), **A),
    op("layer_norm.offset", lambda x: F.layer_norm(x + 100.0, (64,)), T(4, 64), rtol=1e-3, atol=1e-3),
    op("layer_norm.dynamic", lambda x, w, b: F.layer_norm(x, (32,), w, b), T(n, 32), T(32, **W), T(32), **A),
    op("layer_norm.dyn_seq", lambda x, w, b: F.layer_norm(x, (32,), w, b), T(n, s, 32), T(32, **W), T(32), **A),
    op("layer_norm.dynamic.f16", lambda x, w, b: F.layer_norm(x, (32,), w, b), T(n, 32, dtype=f16), T(32, dtype=f16, **W), T(32, dtype=f16), **acc(f16)),
    # group_norm
    *dtypes("group_norm", lambda x, w, b: F.group_norm(x, 2, w, b), T(2, 4, 5, 5), T(4, **W), T(4), dtypes=FLOATS, tol=ACC),
    op("group_norm.groups4", lambda x, w, b: F.group_norm(x, 4, w, b), T(2, 8, 4, 4), T(8, **W), T(8), **A),
    op("group_norm.one_group", lambda x: F.group_norm(x, 1), T(2, 6, 4, 4), **A),
    op("group_norm.per_channel", lambda x: F.group_norm(x, 6), T(2, 6, 4, 4), **A),
    op("group_norm.1d", lambda x, w, b: F.group_norm(x, 2, w, b), T(2, 4, 10), T(4, **W), T(4), **A),
    op("group_norm.dynamic", lambda x, w, b: F.group_norm(x, 2, w, b), T(n, 4, 5, 5), T(4, **W), T(4), **A),
    op("group_norm.dyn_hw", lambda x, w, b: F.group_norm(x, 2, w, b), T(2, 4, h, h), T(4, **W), T(4), **A),
    # instance_norm
    op("instance_norm", lambda x: F.instance_norm(x), T(2, 3, 6, 6), **A),
    op("instance_norm.affine", lambda x, w, b: F.instance_norm(x, weight=w, bias=b), T(2, 3, 6, 6), T(3, **W), T(3), **A),
    op("instance_norm.1d", lambda x: F.instance_norm(x), T(2, 3, 12), **A),
    op("instance_norm.running_stats", lambda x, m, v: F.instance_norm(x, m, v, use_input_stats=False), T(2, 3, 6, 6), T(3), T(3, **VAR), **A),
    op("instance_norm.f16", lambda x: F.instance_norm(x), T(2, 3, 6, 6, dtype=f16), **acc(f16)),
    op("instance_norm.dynamic", lambda x: F.instance_norm(x), T(n, 3, 6, 6), **A),
    # rms_norm
    *dtypes("rms_norm", lambda x, w: F.rms_norm(x, (32,), w), T(4, 8, 32), T(32, **W), dtypes=FLOATS, tol=ACC),
    op("rms_norm.no_weight", lambda x: F.rms_norm(x, (32,), eps=1e-6), T(4, 32), **A),
    op("rms_norm.dynamic", lambda x, w: F.rms_norm(x, (32,), w), T(n, s, 32), T(32, **W), **A),
    # other normalisations
    op("normalize", lambda x: F.normalize(x, dim=-1), T(4, 32), **A, ops=("aten.linalg_vector_norm",)),
    op("normalize.p1_dim0", lambda x: F.normalize(x, p=1.0, dim=0), T(4, 32), **A, ops=("aten.linalg_vector_norm",)),
    op("normalize.zero_rows", lambda x: F.normalize(x * (x.sum(1, keepdim=True) > 0), dim=1), T(8, 16), **A, ops=("aten.linalg_vector_norm",)),
    op("normalize.dynamic", lambda x: F.normalize(x, dim=-1), T(n, 32), **A, ops=("aten.linalg_vector_norm",)),
    op("local_response_norm", lambda x: F.local_response_norm(x, 3), T(2, 6, 5, 5), **A, ops=("aten.avg_pool3d",)),
]
