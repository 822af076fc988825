"""Embedding lookups (embedding, embedding_bag) and attention:
scaled_dot_product_attention plain, causal, with bool and additive masks,
with a custom scale, cross-attention, grouped-query, and a hand-written
attention block. Weights, queries, keys and values are inputs in [-1, 1).
"""

import torch
import torch.nn.functional as F

from conformance import Dyn, T, op

from ._common import ACC, FLOATS, U, acc, dtypes, f16, f32, i32, i64, keep_diagonal

b = Dyn("b", 2, 3)
s = Dyn("s", 8, 13)
n = Dyn("n", 3, 6)
A = acc(f32)
V = 50  # vocabulary


def I(*shape, high=V, dtype=i64):
    return T(*shape, dtype=dtype, low=0, high=high)


def sdpa(**kw):
    return lambda q, k, v: F.scaled_dot_product_attention(q, k, v, **kw)


def sdpa_mask(**kw):
    return lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m, **kw)


def attention_block(x, wq, wk, wv, wo):
    """Multi-head self-attention written out: projections, heads, softmax, merge."""
    B, L, E = x.shape
    H = 4
    q, k, v = (F.linear(x, w).view(B, L, H, E // H).transpose(1, 2) for w in (wq, wk, wv))
    scores = q @ k.transpose(-2, -1) / (E // H) ** 0.5
    out = scores.softmax(-1) @ v
    return F.linear(out.transpose(1, 2).reshape(B, L, E), wo)


CASES = [
    # embedding
    *dtypes("embedding", F.embedding, I(4, 6), U(V, 16), dtypes=FLOATS),
    op("embedding.1d", F.embedding, I(7), U(V, 16)),
    op("embedding.i32_index", F.embedding, I(4, 6, dtype=i32), U(V, 16)),
    op("embedding.3d_index", F.embedding, I(2, 3, 4), U(V, 8)),
    op("embedding.padding_idx", lambda i, w: F.embedding(i, w, padding_idx=0), I(4, 6, high=5), U(V, 16)),
    op("embedding.dynamic", F.embedding, I(b, 6), U(V, 16)),
    op("embedding.dyn_seq", F.embedding, I(b, s), U(V, 16)),
    op("embedding.dyn_vocab", F.embedding, I(4, 6, high=3), U(n, 16)),
    op("embedding_bag.sum", lambda i, w, o: F.embedding_bag(i, w, o, mode="sum"), I(10), U(V, 8), T(3, dtype=i64, gen=lambda s_, d, g: torch.tensor([0, 4, 5])), rtol=1e-5, atol=1e-5),
    op("embedding_bag.mean", lambda i, w, o: F.embedding_bag(i, w, o, mode="mean"), I(10), U(V, 8), T(3, dtype=i64, gen=lambda s_, d, g: torch.tensor([0, 2, 7])), rtol=1e-5, atol=1e-5),
    op("embedding_bag.max", lambda i, w, o: F.embedding_bag(i, w, o, mode="max"), I(10), U(V, 8), T(3, dtype=i64, gen=lambda s_, d, g: torch.tensor([0, 3, 6]))),
    op("embedding_bag.2d", lambda i, w: F.embedding_bag(i, w, mode="sum"), I(4, 5), U(V, 8), rtol=1e-5, atol=1e-5),
    # scaled_dot_product_attention (B, H, L, D)
    *dtypes("scaled_dot_product_attention", sdpa(), U(2, 4, 8, 16), U(2, 4, 8, 16), U(2, 4, 8, 16), dtypes=FLOATS, tol=ACC),
    *dtypes("scaled_dot_product_attention.causal", sdpa(is_causal=True), U(2, 4, 8, 16), U(2, 4, 8, 16), U(2, 4, 8, 16), dtypes=FLOATS, tol=ACC),
    op("scaled_dot_product_attention.bool_mask", sdpa_mask(), U(2, 4, 8, 16), U(2, 4, 8, 16), U(2, 4, 8, 16), T(2, 1, 8, 8, dtype=torch.bool, gen=keep_diagonal(0.5)), **A),
    op("scaled_dot_product_attention.float_mask", sdpa_mask(), U(2, 4, 8, 16), U(2, 4, 8, 16), U(2, 4, 8, 16), T(1, 1, 8, 8, low=-4.0, high=0.0), **A),
    op("scaled_dot_product_attention.float_mask.f16", sdpa_mask(), U(2, 4, 8, 16, dtype=f16), U(2, 4, 8, 16, dtype=f16), U(2, 4, 8, 16, dtype=f16), T(1, 1, 8, 8, dtype=f16, low=-4.0, high=0.0), **acc(f16)),
    op("scaled_dot_product_attention.scale", sdpa(scale=0.5), U(2, 4, 8, 16), U(2, 4, 8, 16), U(2, 4, 8, 16), tags={"gated"}, **A),
    op("scaled_dot_product_attention.cross", sdpa(), U(2, 4, 6, 16), U(2, 4, 10, 16), U(2, 4, 10, 32), **A),
    op("scaled_dot_product_attention.cross_causal", sdpa(is_causal=True), U(2, 4, 6, 16), U(2, 4, 10, 16), U(2, 4, 10, 16), **A),
    op("scaled_dot_product_attention.3d", sdpa(), U(4, 8, 16), U(4, 8, 16), U(4, 8, 16), **A),
    op("scaled_dot_product_attention.gqa", sdpa(enable_gqa=True), U(2, 8, 8, 16), U(2, 2, 8, 16), U(2, 2, 8, 16), **A),
    op("scaled_dot_product_attention.large_logits", sdpa(), T(1, 2, 8, 16, low=-8.0, high=8.0), T(1, 2, 8, 16, low=-8.0, high=8.0), U(1, 2, 8, 16), rtol=1e-4, atol=1e-3),
    op("scaled_dot_product_attention.dynamic", sdpa(), U(b, 4, 8, 16), U(b, 4, 8, 16), U(b, 4, 8, 16), **A),
    op("scaled_dot_product_attention.dyn_seq", sdpa(), U(2, 4, s, 16), U(2, 4, s, 16), U(2, 4, s, 16), **A),
    op("scaled_dot_product_attention.dyn_causal", sdpa(is_causal=True), U(b, 4, s, 16), U(b, 4, s, 16), U(b, 4, s, 16), **A),
    op("scaled_dot_product_attention.dyn_kv", sdpa(), U(2, 4, 6, 16), U(2, 4, s, 16), U(2, 4, s, 16), **A),
    op("scaled_dot_product_attention.dyn_float_mask", sdpa_mask(), U(2, 4, s, 16), U(2, 4, s, 16), U(2, 4, s, 16), T(1, 1, s, s, low=-4.0, high=0.0), **A),
    # written out
    op("attention.manual", attention_block, U(2, 8, 32), U(32, 32), U(32, 32), U(32, 32), U(32, 32), ops=("aten.linear", "aten.matmul", "aten.softmax"), **A),
    op("attention.manual_dynamic", attention_block, U(b, s, 32), U(32, 32), U(32, 32), U(32, 32), U(32, 32), ops=("aten.linear", "aten.matmul", "aten.softmax"), **A),
]
