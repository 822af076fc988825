"""Contractions: matmul in all its rank combinations, mm/bmm/mv/dot, linear,
addmm and friends, einsum, tensordot, and a few triangular/diagonal helpers.

Operands are drawn from [-1, 1) so that results stay O(sqrt(K)) and the
ACC tolerances mean the same thing for every K.
"""

import torch
import torch.nn.functional as F

from conformance import Dyn, T, op

from ._common import ACC, FLOATS, U, acc, bf16, dtypes, f16, f32, f64, i32, i64

n = Dyn("n", 3, 6)
b = Dyn("b", 2, 4)
k = Dyn("k", 8, 17)
A = acc(f32)


CASES = [
    # matmul: every rank combination (the 2-d float32 case is basics.matmul)
    *dtypes("matmul", torch.matmul, U(16, 32), U(32, 8), dtypes=(f16, bf16, f64), tol=ACC),
    op("matmul.i32", torch.matmul, T(4, 6, dtype=i32), T(6, 5, dtype=i32)),
    op("matmul.i64", torch.matmul, T(4, 6, dtype=i64), T(6, 5, dtype=i64)),
    op("matmul.vec_vec", torch.matmul, U(32), U(32), **A),
    op("matmul.mat_vec", torch.matmul, U(16, 32), U(32), **A),
    op("matmul.vec_mat", torch.matmul, U(32), U(32, 16), **A),
    op("matmul.batched", torch.matmul, U(4, 16, 32), U(4, 32, 8), **A),
    op("matmul.batch_broadcast", torch.matmul, U(4, 16, 32), U(32, 8), **A),
    op("matmul.batch_broadcast_lhs", torch.matmul, U(16, 32), U(3, 32, 8), **A),
    op("matmul.4d", torch.matmul, U(2, 3, 16, 32), U(2, 3, 32, 8), **A),
    op("matmul.4d_broadcast", torch.matmul, U(2, 1, 16, 32), U(1, 3, 32, 8), **A),
    op("matmul.batched_vec", torch.matmul, U(4, 16, 32), U(32), **A),
    op("matmul.odd_sizes", torch.matmul, U(7, 13), U(13, 5), **A),
    op("matmul.k1", torch.matmul, U(7, 1), U(1, 5), **A),
    op("matmul.large_k", torch.matmul, U(8, 1024), U(1024, 8), rtol=1e-4, atol=1e-3),
    op("matmul.dynamic", torch.matmul, U(n, 32), U(32, 8), **A),
    op("matmul.dyn_k", torch.matmul, U(4, k), U(k, 8), **A),
    op("matmul.dyn_all", torch.matmul, U(n, k), U(k, b), **A),
    op("matmul.dyn_batch", torch.matmul, U(b, 16, 32), U(b, 32, 8), **A),
    op("matmul.dyn_broadcast", torch.matmul, U(b, n, 32), U(32, 8), **A),
    # found by `conformance fuzz --backend stablehlo`: iree-compile turns its dot_general into an invalid reshape
    op("matmul.dyn_vec_mat", torch.matmul, U(k), U(k, 8), **A),
    # mm, bmm, mv, dot, outer
    *dtypes("mm", torch.mm, U(16, 32), U(32, 8), dtypes=FLOATS, tol=ACC),
    *dtypes("bmm", torch.bmm, U(4, 16, 32), U(4, 32, 8), dtypes=FLOATS, tol=ACC),
    op("bmm.i32", torch.bmm, T(2, 4, 6, dtype=i32), T(2, 6, 3, dtype=i32)),
    op("mv", torch.mv, U(16, 32), U(32), **A),
    op("dot", torch.dot, U(64), U(64), **A),
    op("dot.i64", torch.dot, T(64, dtype=i64), T(64, dtype=i64)),
    op("vdot", torch.vdot, U(64), U(64), **A),
    op("outer", torch.outer, U(8), U(5)),
    op("mm.dynamic", torch.mm, U(n, 32), U(32, b), **A),
    op("bmm.dynamic", torch.bmm, U(b, n, 32), U(b, 32, 8), **A),
    op("mv.dynamic", torch.mv, U(n, 32), U(32), **A),
    op("dot.dynamic", torch.dot, U(k), U(k), **A),
    # linear: weight (out, in) and optional bias
    *dtypes("linear", F.linear, U(8, 32), U(16, 32), U(16), dtypes=FLOATS, tol=ACC),
    op("linear.no_bias", F.linear, U(8, 32), U(16, 32), **A),
    op("linear.3d", F.linear, U(2, 8, 32), U(16, 32), U(16), **A),
    op("linear.4d", F.linear, U(2, 3, 4, 32), U(16, 32), U(16), **A),
    op("linear.vec", F.linear, U(32), U(16, 32), U(16), **A),
    op("linear.dynamic", F.linear, U(n, 32), U(16, 32), U(16), **A),
    op("linear.dyn_seq", F.linear, U(b, n, 32), U(16, 32), U(16), **A),
    op("linear.dyn_no_bias", F.linear, U(b, n, 32), U(16, 32), **A),
    # addmm and friends: beta * input + alpha * (a @ b)
    op("addmm", torch.addmm, U(16, 8), U(16, 32), U(32, 8), **A),
    op("addmm.broadcast_bias", torch.addmm, U(8), U(16, 32), U(32, 8), **A),
    op("addmm.alpha_beta", lambda c, a, b: torch.addmm(c, a, b, beta=0.5, alpha=2.0), U(16, 8), U(16, 32), U(32, 8), **A),
    op("addmm.beta0", lambda c, a, b: torch.addmm(c, a, b, beta=0.0), U(16, 8), U(16, 32), U(32, 8), **A),
    op("addmm.f16", torch.addmm, U(8, dtype=f16), U(16, 32, dtype=f16), U(32, 8, dtype=f16), **acc(f16)),
    op("addmm.dynamic", torch.addmm, U(8), U(n, 32), U(32, 8), **A),
    op("addmv", torch.addmv, U(16), U(16, 32), U(32), **A),
    op("addbmm", torch.addbmm, U(16, 8), U(4, 16, 32), U(4, 32, 8), **A),
    op("baddbmm", lambda c, a, b: torch.baddbmm(c, a, b, beta=0.5, alpha=0.25), U(4, 16, 8), U(4, 16, 32), U(4, 32, 8), **A),
    op("baddbmm.dynamic", torch.baddbmm, U(b, 1, 8), U(b, 16, 32), U(b, 32, 8), **A),
    op("addr", torch.addr, U(8, 5), U(8), U(5)),
    # einsum
    op("einsum.matmul", lambda a, b: torch.einsum("ij,jk->ik", a, b), U(16, 32), U(32, 8), **A),
    op("einsum.bmm", lambda a, b: torch.einsum("bij,bjk->bik", a, b), U(4, 16, 32), U(4, 32, 8), **A),
    op("einsum.attention_scores", lambda q, k: torch.einsum("bhqd,bhkd->bhqk", q, k), U(2, 4, 8, 16), U(2, 4, 10, 16), **A),
    op("einsum.outer", lambda a, b: torch.einsum("i,j->ij", a, b), U(8), U(5)),
    op("einsum.transpose", lambda a: torch.einsum("ij->ji", a), U(4, 6)),
    op("einsum.trace", lambda a: torch.einsum("ii->", a), U(8, 8), **A),
    op("einsum.diagonal", lambda a: torch.einsum("ii->i", a), U(8, 8)),
    op("einsum.sum_axis", lambda a: torch.einsum("ijk->ik", a), U(3, 8, 5), **A),
    op("einsum.bilinear", lambda x, w, y: torch.einsum("bi,oij,bj->bo", x, w, y), U(4, 8), U(3, 8, 6), U(4, 6), **A),
    op("einsum.ellipsis", lambda a, b: torch.einsum("...ij,...jk->...ik", a, b), U(2, 3, 8, 16), U(2, 3, 16, 4), **A),
    op("einsum.broadcast_batch", lambda a, b: torch.einsum("bij,jk->bik", a, b), U(4, 8, 16), U(16, 5), **A),
    op("einsum.f16", lambda a, b: torch.einsum("ij,jk->ik", a, b), U(16, 32, dtype=f16), U(32, 8, dtype=f16), **acc(f16)),
    op("einsum.dynamic", lambda a, b: torch.einsum("bij,bjk->bik", a, b), U(b, n, 16), U(b, 16, 8), **A),
    op("tensordot", lambda a, b: torch.tensordot(a, b, dims=([1, 2], [0, 1])), U(4, 6, 8), U(6, 8, 5), **A),
    op("tensordot.int_dims", lambda a, b: torch.tensordot(a, b, dims=1), U(4, 6, 8), U(8, 5), **A),
    op("kron", torch.kron, U(3, 4), U(2, 5)),
    # triangles, diagonals, traces
    op("trace", torch.trace, U(8, 8), **A),
    op("tril", torch.tril, T(6, 8)),
    op("tril.offset", lambda x: torch.tril(x, -1), T(6, 8)),
    op("triu", torch.triu, T(6, 8)),
    op("triu.offset_batched", lambda x: torch.triu(x, 2), T(2, 6, 8)),
    op("triu.dynamic", lambda x: torch.triu(x, 1), T(n, n)),
    op("diagonal", lambda x: torch.diagonal(x), T(6, 8)),
    op("diagonal.offset_dims", lambda x: torch.diagonal(x, offset=1, dim1=0, dim2=2), T(5, 3, 6)),
    op("diag.vec", torch.diag, T(5), ops=("aten.diag",)),
    op("diag_embed", torch.diag_embed, T(3, 5)),
]
