"""A small GPT-2 language model from `transformers` with random weights (built from a
config, never downloaded): 2 layers, n_embd 128, GPT-2's full vocabulary,
input_ids only, batch 1, sequence 64; the output is (logits,).

The LM head is tied to the token embedding (as in GPT-2), attention is
"sdpa" (transformers' default: causal aten.scaled_dot_product_attention),
and use_cache=False so no key/value cache is built or returned.
"""

import torch

from conformance import T, model

from ._hf import TupleOutput

SEQ = 64
VOCAB = 50257  # GPT-2's vocabulary


def gpt2_small():
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(
        vocab_size=VOCAB, n_positions=1024, n_embd=128, n_layer=2, n_head=2, use_cache=False, attn_implementation="sdpa"
    )
    return TupleOutput(GPT2LMHeadModel(config), ("logits",))


CASES = [
    # Logits are ~0.2, at most ~1.7 (normal(0, 0.02) embedding against
    # layer-normed states); float32 vs float64 differs by <= 7e-7.
    # rtol 1e-4 / atol 1e-4.
    model(
        "gpt2.small",
        gpt2_small,
        T(1, SEQ, dtype=torch.int64, low=0, high=VOCAB),
        ops=(
            "aten.embedding",
            "aten.layer_norm",
            "aten.addmm",
            "aten.scaled_dot_product_attention",
            "aten.tanh",
            "aten.linear",
        ),
        tags={"nlp"},
        rtol=1e-4,
        atol=1e-4,
    ),
]
