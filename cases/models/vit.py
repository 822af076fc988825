"""A tiny Vision Transformer from `transformers` with random weights (built from a
config, never downloaded): 64x64 RGB images, 8x8 patches (64 tokens + CLS),
2 layers, hidden 128, 4 heads, "eager" attention; the outputs are
(last_hidden_state, pooler_output)."""

from conformance import T, model

from ._hf import TupleOutput


def vit_tiny():
    from transformers import ViTConfig, ViTModel

    config = ViTConfig(
        image_size=64,
        patch_size=8,
        num_channels=3,
        hidden_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=512,
        attn_implementation="eager",
    )
    return TupleOutput(ViTModel(config), ("last_hidden_state", "pooler_output"), input_name="pixel_values")


CASES = [
    # Layer-normed states and a tanh pooler: outputs O(1), float32 error
    # against float64 ~1e-6. rtol 1e-4 / atol 1e-4.
    model(
        "vit.tiny",
        vit_tiny,
        T(1, 3, 64, 64, low=-1.0, high=1.0),
        ops=("aten.conv2d", "aten.cat", "aten.layer_norm", "aten.linear", "aten.matmul", "aten.softmax", "aten.gelu"),
        tags={"vision"},
        rtol=1e-4,
        atol=1e-4,
    ),
]
