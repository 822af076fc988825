"""`eager-noisy`: eager with its float outputs nudged, to see a failure report.

A self-check of the harness, not a product backend: every float output is
perturbed by 1e-3 relative noise (seeded), which is far beyond the default
tolerances, so its cases fail as NUMERIC_MISMATCH with the full explanation.
"""

import torch
from torch.utils._pytree import tree_map

from conformance.backends.protocol import Backend


class EagerNoisy(Backend):
    name = "eager-noisy"
    description = "eager with 1e-3 relative noise on float outputs (a harness self-check)"
    stages = ("run",)
    in_matrix = False

    def run(self, _, inputs, case_run):
        generator = torch.Generator().manual_seed(0)
        with torch.no_grad():
            outputs = case_run.module(*inputs)

        def nudge(t):
            if isinstance(t, torch.Tensor) and t.dtype.is_floating_point and t.numel():
                noise = torch.randn(t.shape, generator=generator).to(t.dtype)
                return t + t.abs().clamp_min(1.0) * 1e-3 * noise
            return t

        return tree_map(nudge, outputs)


BACKEND = EagerNoisy()
