"""Weight initialisation shared by the hand-written vision models."""

import torch
from torch import nn


def randomize_batchnorm(module: nn.Module) -> None:
    """Give every BatchNorm non-trivial running statistics and affine parameters.

    Freshly built, an eval-mode BatchNorm (mean 0, var 1, weight 1, bias 0) is
    the identity, so a compiler that folds or lowers it wrongly would still
    pass. The values stay close to the identity so activations keep their
    scale through deep networks. Uses the global RNG, which the case seeds.
    """
    for m in module.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            with torch.no_grad():
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.8, 1.2)
                m.bias.uniform_(-0.1, 0.1)
