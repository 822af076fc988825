"""Reproducible inputs and module instances for a case.

The seed of a case is its own (declared, or derived from its id) mixed with
the run's `--seed`, so a run is reproducible and `--seed` explores new
values everywhere at once.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

import torch
from torch.testing import make_tensor

from conformance.cases.spec import Case, T

# make_tensor's float range is [-9, 9); exp, pow and friends overflow f16 there.
DEFAULT_RANGE = {torch.float16: (-4.0, 4.0), torch.bfloat16: (-4.0, 4.0)}


def case_seed(case: Case, run_seed: int = 0) -> int:
    return (case.effective_seed ^ (run_seed * 0x9E3779B1)) & 0x7FFF_FFFF


@contextlib.contextmanager
def seeded(seed: int) -> Iterator[torch.Generator]:
    """Seed torch's global RNG (module init uses it) without leaking state."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        yield torch.Generator().manual_seed(seed)


def make_input(spec: T, size_index: int, generator: torch.Generator) -> torch.Tensor:
    shape = spec.concrete_shape(size_index)
    if spec.gen is not None:
        return spec.gen(shape, spec.dtype, generator)
    low, high = spec.low, spec.high
    if low is None and high is None:
        low, high = DEFAULT_RANGE.get(spec.dtype, (None, None))
    # make_tensor draws from the global RNG, which `seeded` has fixed.
    return make_tensor(shape, dtype=spec.dtype, device="cpu", low=low, high=high)


def make_inputs(case: Case, run_seed: int = 0) -> list[list[torch.Tensor]]:
    """One list of input tensors per size the case runs at."""
    sets = []
    for size_index in range(case.size_count):
        with seeded(case_seed(case, run_seed) + size_index) as generator:
            sets.append([make_input(spec, size_index, generator) for spec in case.inputs])
    return sets


def make_module(case: Case, run_seed: int = 0) -> torch.nn.Module:
    with seeded(case_seed(case, run_seed)):
        return case.build()
