"""--check-determinism: the outputs of two runs of a passing pair, compared bit for bit.

Passing against eager's tolerance is not enough to trust a backend: a
reduction whose summation order depends on thread timing, or a kernel
reading memory nobody wrote, passes with one value tonight and another
tomorrow. The first run keeps its outputs (`keep`); the second, in a fresh
child, compares its own with them (`difference`), bit for bit: NaNs with
the same payload are equal, -0.0 and 0.0 are not.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.utils._pytree import keystr, tree_flatten_with_path

from conformance.paths import safe_name

UNCHECKED = "determinism_unchecked"  # Result.extras key: why a pass's outputs could not be kept or compared


def _path(directory: str, case: str, backend: str) -> Path:
    return Path(directory) / safe_name(case) / f"{safe_name(backend)}.pt"


def keep(directory: str, case: str, backend: str, outputs: list[Any]) -> None:
    """Save a pair's outputs (one entry per input set) for the next run to compare with."""
    path = _path(directory, case, backend)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(outputs, path)


def kept(directory: str, case: str, backend: str) -> list[Any] | None:
    """The outputs `keep` saved for a pair (one entry per input set), or None."""
    path = _path(directory, case, backend)
    return torch.load(path, weights_only=False) if path.exists() else None  # written by this run's own child


def difference(directory: str, case: str, backend: str, outputs: list[Any]) -> str | None:
    """How `outputs` differ from the kept ones, naming the first differing output and index; None if bit-identical
    (or nothing was kept: the first run did not pass, or the case is judged on statistics)."""
    path = _path(directory, case, backend)
    if not path.exists():
        return None
    before = torch.load(path, weights_only=False)  # written by the first run of this very pair
    for index, (first, second) in enumerate(zip(before, outputs)):
        found = first_difference(first, second)
        if found:
            return found + (f" (input set {index + 1} of {len(outputs)})" if len(outputs) > 1 else "")
    return None


def _tensor(value: Any) -> torch.Tensor | None:
    if isinstance(value, torch.Tensor):
        return value.detach()
    if isinstance(value, (np.ndarray, np.generic)):
        return torch.from_numpy(np.ascontiguousarray(value))
    return None


def first_difference(first: Any, second: Any) -> str | None:
    """Where two outputs of one pair first differ in their bits, or None."""
    leaves1, spec1 = tree_flatten_with_path(first)
    leaves2, spec2 = tree_flatten_with_path(second)
    if spec1 != spec2:
        return f"the outputs' structure differs between the runs ({spec1} then {spec2})"
    for (path, a), (_, b) in zip(leaves1, leaves2):
        name = f"output{keystr(path)}" if path else "output"
        x, y = _tensor(a), _tensor(b)
        if x is None or y is None:
            if type(a) is not type(b) or a != b:
                return f"{name} is {a!r} in the first run and {b!r} in the second"
            continue
        if (x.dtype, x.shape) != (y.dtype, y.shape):
            return f"{name} is {x.dtype}{list(x.shape)} in the first run and {y.dtype}{list(y.shape)} in the second"
        if x.numel() == 0:
            continue
        bits1, bits2 = (t.contiguous().reshape(-1).view(torch.uint8).reshape(t.numel(), -1) for t in (x, y))
        differing = (bits1 != bits2).any(dim=1).nonzero()
        if differing.numel():
            flat = int(differing[0])
            index = [int(i) for i in np.unravel_index(flat, tuple(x.shape))] if x.dim() else []
            count = differing.numel()
            return (
                f"{name} differs bit for bit from the first run's at index {index}: {x.reshape(-1)[flat].item()!r} "
                f"then {y.reshape(-1)[flat].item()!r} ({count} of {x.numel()} elements differ)"
            )
    return None
