"""LeNet-5 (LeCun et al. 1998) on a 32x32 grey image: tanh and average pooling, as
in the paper (C5 is a 5x5 convolution that leaves a 1x1 map)."""

import torch
from torch import nn

from conformance import T, model


class LeNet5(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 6, 5),  # C1: 6@28x28
            nn.Tanh(),
            nn.AvgPool2d(2),  # S2: 6@14x14
            nn.Conv2d(6, 16, 5),  # C3: 16@10x10
            nn.Tanh(),
            nn.AvgPool2d(2),  # S4: 16@5x5
            nn.Conv2d(16, 120, 5),  # C5: 120@1x1
            nn.Tanh(),
        )
        self.classifier = nn.Sequential(nn.Linear(120, 84), nn.Tanh(), nn.Linear(84, num_classes))

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


CASES = [
    # Three convolutions and two linears with PyTorch's default init: logits
    # are ~0.1 and float32 vs float64 differs by ~1e-8. rtol 1e-4 and atol
    # 1e-5 (1e-4 of the output scale) leave room for any summation order.
    model(
        "lenet5",
        LeNet5,
        T(1, 1, 32, 32, low=-1.0, high=1.0),
        ops=("aten.conv2d", "aten.tanh", "aten.avg_pool2d", "aten.linear"),
        tags={"vision"},
        rtol=1e-4,
        atol=1e-5,
    ),
]
