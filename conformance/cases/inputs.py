"""Reproducible inputs and module instances for a case.

The seed of a case is its own (declared, or derived from its id) mixed with
the run's `--seed`, so a run is reproducible and `--seed` explores new
values everywhere at once. Exact inputs are loaded as they are (no seed)
and checked: tensors, on the CPU, of a dtype the table has, and sets that
agree on every static dimension.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

import torch
from torch.testing import make_tensor

from conformance import dtypes
from conformance.cases.outputs import open_library_containers
from conformance.cases.spec import Case, CaseError, T, check_dtype

# make_tensor's float range is [-9, 9); exp, pow and friends overflow f16 there.
DEFAULT_RANGE = {torch.float16: (-4.0, 4.0), torch.bfloat16: (-4.0, 4.0)}
# Dtypes make_tensor does not draw: their values are random bytes.
AS_BYTES = {torch.float8_e8m0fnu, torch.float4_e2m1fn_x2}


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
    if spec.dtype in AS_BYTES:
        return torch.randint(0, 256, shape, dtype=torch.uint8, generator=generator).view(spec.dtype)
    if spec.dtype in dtypes.QUANTIZED:  # a float tensor quantized with a fixed scale and zero point
        floats = make_tensor(shape, dtype=torch.float32, device="cpu", low=low, high=high)
        return torch.quantize_per_tensor(floats, 0.1, 10 if spec.dtype == torch.quint8 else 0, spec.dtype)
    # make_tensor draws from the global RNG, which `seeded` has fixed.
    return make_tensor(shape, dtype=spec.dtype, device="cpu", low=low, high=high)


def make_inputs(case: Case, run_seed: int = 0) -> list[list[torch.Tensor]]:
    """One list of input tensors per input set: exact ones as loaded, drawn ones per size the case runs at."""
    if case.exact is not None:
        return load_exact(case)
    sets = []
    for size_index in range(case.size_count):
        with seeded(case_seed(case, run_seed) + size_index) as generator:
            sets.append([make_input(spec, size_index, generator) for spec in case.inputs])
    return sets


def make_module(case: Case, run_seed: int = 0) -> torch.nn.Module:
    with seeded(case_seed(case, run_seed)):
        module = case.build()
    open_library_containers()  # before eager runs or torch.export flattens the outputs
    return module


def load_exact(case: Case) -> list[list[torch.Tensor]]:
    """The case's exact input sets, checked; a CaseError names the case and the input at fault."""
    sets = [list(inputs) for inputs in case.exact.load()]
    if not sets:
        raise CaseError(f"case {case.id!r}: its Exact inputs hold no input set")
    dynamic = case.exact.dynamic_dims()
    first = sets[0]
    for number, inputs in enumerate(sets, 1):
        where = f"case {case.id!r}, input set {number}"
        if len(inputs) != len(first):
            raise CaseError(f"{where}: {len(inputs)} inputs where set 1 has {len(first)}")
        for index, (tensor, model) in enumerate(zip(inputs, first)):
            if not isinstance(tensor, torch.Tensor):
                raise CaseError(f"{where}, input {index}: {type(tensor).__name__}, not a tensor")
            check_dtype(tensor.dtype, f"{where}, input {index}")
            if tensor.device.type != "cpu" or tensor.layout != torch.strided:
                raise CaseError(f"{where}, input {index}: a {tensor.layout} tensor on {tensor.device}; exact inputs are dense CPU tensors")
            fixed = [d for d in range(model.dim()) if d not in dynamic.get(index, ())]
            if tensor.dtype != model.dtype or tensor.dim() != model.dim() or any(tensor.shape[d] != model.shape[d] for d in fixed):
                raise CaseError(
                    f"{where}, input {index}: {dtypes.name(tensor.dtype)}{list(tensor.shape)} where set 1 has "
                    f"{dtypes.name(model.dtype)}{list(model.shape)}; every set runs on one compiled program, "
                    "so only dims declared dynamic may differ"
                )
    return sets
