"""sha256 digests of what the compile cache keys by: JSON-able parts, files, tensors and structures of them.

A leaf module: the cache store and the toolchain (digesting an exported
program) both use it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any


def digest(*parts: Any) -> str:
    """sha256 of the parts: bytes as they are, a Path by its content, anything else as JSON."""
    h = hashlib.sha256()
    for part in parts:
        if isinstance(part, Path):
            with open(part, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
        else:
            h.update(part if isinstance(part, bytes) else json.dumps(part, sort_keys=True, default=str).encode())
        h.update(b"\0")
    return h.hexdigest()


def values_digest(value: Any) -> str:
    """sha256 of a structure of tensors (inputs, outputs, weights): its shape, and each tensor's dtype, shape and bytes.

    Other leaves (Python scalars, None, strings) count by their repr.
    """
    import torch
    from torch.utils._pytree import tree_flatten

    leaves, spec = tree_flatten(value)
    h = hashlib.sha256(str(spec).encode())
    for leaf in leaves:
        if isinstance(leaf, torch.Tensor):
            _update_tensor(h, leaf)
        else:
            h.update(f"{type(leaf).__name__}:{leaf!r}".encode())
        h.update(b"\0")
    return h.hexdigest()


def _update_tensor(h, t) -> None:
    import torch

    t = t.detach()
    h.update(f"{t.dtype}{tuple(t.shape)}".encode())
    if t.is_quantized:  # the integers and how they map to reals
        scheme = t.qscheme()
        params = (t.q_scale(), t.q_zero_point()) if scheme in (torch.per_tensor_affine, torch.per_tensor_symmetric) else (
            t.q_per_channel_scales().tolist(), t.q_per_channel_zero_points().tolist(), t.q_per_channel_axis())
        h.update(f"{scheme}{params}".encode())
        t = t.int_repr()
    if t.numel():
        flat = t.contiguous().reshape(-1)
        if flat.stride(-1) != 1:  # one element keeps any stride through contiguous() (it counts as contiguous)
            flat = torch.empty(flat.numel(), dtype=flat.dtype).copy_(flat)
        h.update(flat.view(torch.uint8).numpy().data)
