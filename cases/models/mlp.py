"""A two-layer perceptron: the smallest model with weights."""

from torch import nn

from conformance import T, model


def mlp():
    return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 10))


CASES = [
    model("mlp", mlp, T(8, 16), ops=("aten.linear", "aten.relu"), rtol=1e-4, atol=1e-5),
]
