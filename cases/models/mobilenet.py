"""MobileNetV2 at 224x224, batch 1 (architecture in _mobilenet.py).

torchvision's init (Kaiming-normal convolutions, a normal(0, 0.01)
classifier), and non-trivial BatchNorm statistics so eval-mode BatchNorm is
not the identity. Inputs are in [-1, 1), the scale of normalised pixels.
"""

from conformance import T, model

from ._mobilenet import mobilenet_v2

CASES = [
    # 52 convolutions (17 depthwise): rtol 1e-3 as for ResNet. The small
    # classifier init keeps logits at ~0.1; float32 vs float64 differs by
    # <= 3e-8, so atol 1e-5 (1e-4 of the largest logit).
    model(
        "mobilenet_v2",
        mobilenet_v2,
        T(1, 3, 224, 224, low=-1.0, high=1.0),
        ops=("aten.conv2d", "aten.batch_norm", "aten.hardtanh_", "aten.add", "aten.adaptive_avg_pool2d", "aten.linear"),
        tags={"vision"},
        rtol=1e-3,
        atol=1e-5,
    ),
]
