"""sha256 digests of what the compile cache keys by: JSON-able parts, files, tensors and structures of them.

A leaf module: the cache store and the toolchain (digesting an exported
program) both use it.
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Any

SKIPPED = ("__pycache__",)


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


@functools.cache
def tree_digest(root: str | Path) -> str | None:
    """Every file under a directory (or one file), by its relative name and content; None when it is gone.

    Bytecode caches and dot-names are left out: they change without the source changing. Read once
    per process: the compile cache asks it for every case of a tree (a torch-mlir checkout's e2e
    package is 4 MB), and a command's trees do not change while it runs.
    """
    path = Path(root)
    if path.is_file():
        return digest(path.name, path)
    if not path.is_dir():
        return None
    h = hashlib.sha256()
    for f in sorted(path.rglob("*")):
        relative = f.relative_to(path)
        if any(part.startswith(".") or part in SKIPPED for part in relative.parts) or not f.is_file():
            continue
        h.update(str(relative).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


@functools.cache
def code_digest() -> str:
    """conformance's own code: how it exports, lowers, classifies and judges is part of every result."""
    return tree_digest(Path(__file__).parent) or ""


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
