"""Random ops. Their values cannot match eager, so they are declared
nondeterministic and judged on shape, dtype and statistics (mean, std,
share of zeros); tensors are 64x64 or larger so the statistics are stable
(channel dropout needs many channels: its zeros come in whole channels, so
a channel of several elements would count as several draws where it is one).
Dropout in eval mode is the identity and is compared exactly.
"""

import torch
import torch.nn.functional as F

from conformance import Dyn, T, op

n = Dyn("n", 64, 96)
R = dict(nondeterministic=True)

CASES = [
    op("dropout.train", lambda x: F.dropout(x, 0.5, training=True), T(64, 64), **R),
    op("dropout.train_p01", lambda x: F.dropout(x, 0.1, training=True), T(128, 64), **R),
    op("dropout.train_dynamic", lambda x: F.dropout(x, 0.3, training=True), T(n, 64), **R),
    op("dropout.eval", lambda x: F.dropout(x, 0.5, training=False), T(8, 16)),
    # One element per channel: the statistics count elements as independent draws, and a channel's elements are one.
    op("feature_dropout.train", lambda x: F.dropout2d(x, 0.5, training=True), T(64, 1024, 1, 1), ops=("aten.feature_dropout",), **R),
    op("alpha_dropout.train", lambda x: F.alpha_dropout(x, 0.2, training=True), T(64, 64), **R),
    op("rand_like", lambda x: torch.rand_like(x), T(64, 64), **R),
    op("randn_like", lambda x: torch.randn_like(x) * 2.0 + x.mean(), T(64, 64), ops=("aten.randn_like",), **R),
    op("bernoulli", torch.bernoulli, T(64, 64, low=0.0, high=1.0), **R),
    op("bernoulli.p", lambda x: torch.bernoulli(x, 0.3), T(64, 64), **R),
    op("uniform_", lambda x: x.uniform_(-2.0, 3.0), T(64, 64), **R),
    op("normal_", lambda x: x.normal_(1.0, 0.5), T(64, 64), **R),
    op("rand_like.dynamic", lambda x: torch.rand_like(x), T(n, 64), **R),
]
