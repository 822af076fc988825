"""BERT encoders from `transformers` with random weights (built from a config, never
downloaded): input_ids only, batch 1, sequence 128; the outputs are
(last_hidden_state, pooler_output).

Attention: `bert.tiny` uses the "eager" implementation (matmul + softmax in
the graph), `bert.tiny.sdpa` and `bert.base` use "sdpa" (transformers'
default: one aten.scaled_dot_product_attention per layer), so an attention
lowering problem shows up as the difference between the two tiny cases.
"""

import torch

from conformance import T, model

from ._hf import TupleOutput

SEQ = 128
VOCAB = 30522  # bert-base-uncased's vocabulary


def bert(attn: str, **sizes):
    def factory():
        from transformers import BertConfig, BertModel

        config = BertConfig(vocab_size=VOCAB, attn_implementation=attn, **sizes)
        return TupleOutput(BertModel(config), ("last_hidden_state", "pooler_output"))

    return factory


TINY = dict(num_hidden_layers=2, hidden_size=128, num_attention_heads=2, intermediate_size=512)
BASE = dict(num_hidden_layers=12, hidden_size=768, num_attention_heads=12, intermediate_size=3072)

INPUT_IDS = T(1, SEQ, dtype=torch.int64, low=0, high=VOCAB)
OPS = ("aten.embedding", "aten.layer_norm", "aten.linear", "aten.gelu", "aten.tanh")
EAGER_ATTN = ("aten.matmul", "aten.softmax")
SDPA = ("aten.scaled_dot_product_attention",)

# Both outputs are O(1) (largest ~4): last_hidden_state is layer-normed,
# pooler_output is a tanh. Float32 vs float64 differs by <= 1e-6 (tiny) and
# <= 3e-6 (base). Tiny: rtol 1e-4 / atol 1e-4. Base: 12 layers of
# approximated exp/erf/tanh and fused attention in a compiler add up, so
# rtol 1e-3 / atol 1e-4 (a real bug moves these outputs by 1e-2 or more).
CASES = [
    model("bert.tiny", bert("eager", **TINY), INPUT_IDS, ops=OPS + EAGER_ATTN, tags={"nlp"}, rtol=1e-4, atol=1e-4),
    model("bert.tiny.sdpa", bert("sdpa", **TINY), INPUT_IDS, ops=OPS + SDPA, tags={"nlp"}, rtol=1e-4, atol=1e-4),
    model("bert.base", bert("sdpa", **BASE), INPUT_IDS, ops=OPS + SDPA, tags={"nlp", "heavy"}, rtol=1e-3, atol=1e-4),
]
