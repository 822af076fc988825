"""ResNet-18 and ResNet-50 at 224x224, batch 1 (architecture in _resnet.py).

Weights follow torchvision's init (Kaiming-normal convolutions), and every
BatchNorm gets non-trivial running statistics so eval-mode BatchNorm is not
the identity. Inputs are in [-1, 1), the scale of normalised pixels.
"""

from conformance import T, model

from ._resnet import resnet18, resnet50

OPS = (
    "aten.conv2d",
    "aten.batch_norm",
    "aten.relu_",
    "aten.max_pool2d",
    "aten.add",
    "aten.adaptive_avg_pool2d",
    "aten.linear",
)

IMAGE = T(1, 3, 224, 224, low=-1.0, high=1.0)

# Tolerances: rtol 1e-3 for deep convolution stacks (a compiler may pick
# another convolution algorithm: im2col, Winograd, other blockings), atol
# about 1e-4 of the largest logit for logits near zero.
#   resnet18: logits up to ~6; float32 vs float64 differs by <= 2e-6.
#   resnet50: untrained residual stacks grow, logits reach ~360 (mean ~80);
#             float32 vs float64 differs by <= 1.2e-4, so atol 1e-2.
CASES = [
    model("resnet18", resnet18, IMAGE, ops=OPS, tags={"vision"}, rtol=1e-3, atol=1e-3),
    model("resnet50", resnet50, IMAGE, ops=OPS, tags={"vision", "heavy"}, rtol=1e-3, atol=1e-2),
]
