"""The first cases: enough to prove the flow end to end."""

import torch

from conformance import T, op

CASES = [
    op("tanh", torch.tanh, T(3, 4)),
    op("add.broadcast", torch.add, T(3, 4), T(4)),
    op("matmul", torch.matmul, T(256, 256), T(256, 256), rtol=1e-4, atol=1e-4),
]
